// reverie dashboard: the buttons and forms call the REST API (same origin) and reload the page.
"use strict";

const ROOT = (document.body && document.body.dataset.root) || "";

function flash(text, isError) {
  const box = document.getElementById("flash");
  if (!box) return;
  box.textContent = text;
  box.className = isError ? "error" : "ok";
  box.hidden = false;
}

async function call(method, path, body) {
  const init = { method: method, headers: { "Accept": "application/json" }, credentials: "same-origin" };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(ROOT + path, init);
  if (!res.ok) {
    let detail = res.statusText;
    try { const p = await res.json(); detail = (p.error || "") + ": " + (p.detail || ""); } catch (e) { /* not JSON */ }
    throw new Error(detail);
  }
  return res.status === 204 ? null : res.json();
}

function memoryPath(id) { return "/v1/memories/" + encodeURIComponent(id); }

async function act(button) {
  const action = button.dataset.action;
  const holder = button.closest("[data-id]");
  const id = holder ? holder.dataset.id : null;
  try {
    button.disabled = true;
    if (action === "dream") {
      flash("dreaming…", false);
      await call("POST", "/v1/dream", {});
      window.location.assign(ROOT + "/dream");
      return;
    }
    if (action === "edit" || action === "cancel-edit") {
      const form = document.getElementById("edit-form");
      form.hidden = action === "cancel-edit";
      if (!form.hidden) form.querySelector("textarea").focus();
      return;
    }
    if (action === "forget") {
      if (!window.confirm("Delete this memory for good? This cannot be undone.")) return;
      await call("DELETE", memoryPath(id));
      window.location.assign(ROOT + "/memories");
      return;
    }
    if (action === "invalidate") {
      const reason = window.prompt("Why is this memory no longer true?");
      if (!reason) return;
      await call("POST", memoryPath(id) + "/invalidate", { reason: reason });
    } else {
      await call("POST", memoryPath(id) + "/" + action);
    }
    window.location.reload();
  } catch (err) {
    flash(err.message, true);
  } finally {
    button.disabled = false;
  }
}

// bulk selection on the memory list ----------------------------------------------------------------
function picked() {
  return Array.from(document.querySelectorAll("input.pick:checked")).map(function (box) { return box.value; });
}

function updateBulk() {
  const ids = picked();
  const count = document.getElementById("selected-count");
  if (count) count.textContent = ids.length + " selected";
  document.querySelectorAll("button[data-bulk]").forEach(function (b) { b.disabled = ids.length === 0; });
}

async function bulk(button) {
  const action = button.dataset.bulk;
  const ids = picked();
  if (!ids.length) return;
  let reason = null;
  if (action === "forget" && !window.confirm("Delete " + ids.length + " memories for good? This cannot be undone.")) return;
  if (action === "invalidate") {
    reason = window.prompt("Why are these " + ids.length + " memories no longer true?");
    if (!reason) return;
  }
  let done = 0;
  const failed = [];
  for (const id of ids) {
    try {
      if (action === "forget") await call("DELETE", memoryPath(id));
      else if (action === "invalidate") await call("POST", memoryPath(id) + "/invalidate", { reason: reason });
      else await call("POST", memoryPath(id) + "/" + action);
      done += 1;
    } catch (err) {
      failed.push(id.slice(0, 8) + ": " + err.message);
    }
  }
  if (failed.length) {
    flash(done + " done; " + failed.length + " refused — " + failed.join("; "), true);
    return;
  }
  window.location.reload();
}

// forms --------------------------------------------------------------------------------------------
async function submitCreate(form) {
  const data = new FormData(form);
  const body = { content: data.get("content"), infer: false, source: "human" };
  for (const key of ["user_id", "agent_id"]) { if (data.get(key)) body[key] = data.get(key); }
  if (data.get("when")) body.when = new Date(data.get("when")).toISOString();
  const res = await call("POST", "/v1/memories", body);
  window.location.assign(ROOT + "/memories/" + encodeURIComponent(res.id));
}

async function submitEdit(form) {
  const data = new FormData(form);
  const body = { content: data.get("content"), reason: data.get("reason") || "edited in the dashboard" };
  if (data.get("category")) body.category = data.get("category");
  await call("PATCH", memoryPath(form.dataset.id), body);
  window.location.reload();
}

function names(value) {
  return String(value || "").split(",").map(function (s) { return s.trim(); }).filter(Boolean);
}

async function submitKey(form) {
  const data = new FormData(form);
  const body = { name: data.get("name"), users: names(data.get("users")), admin: data.get("admin") === "on" };
  const agents = names(data.get("agents"));
  if (agents.length) body.agents = agents;
  const res = await call("POST", "/v1/keys", body);
  document.getElementById("new-key-value").textContent = res.key;
  document.getElementById("new-key").hidden = false;
  form.reset();
  flash("created key " + res.id + " (" + res.name + ")", false);
}

const FORMS = { "create-form": submitCreate, "edit-form": submitEdit, "key-form": submitKey };

document.addEventListener("submit", async function (event) {
  const handler = FORMS[event.target.id];
  if (!handler) return;
  event.preventDefault();
  const button = event.target.querySelector("button[type=submit]");
  if (button) button.disabled = true;
  try {
    await handler(event.target);
  } catch (err) {
    flash(err.message, true);
  } finally {
    if (button) button.disabled = false;
  }
});

document.addEventListener("click", async function (event) {
  const button = event.target.closest("button[data-action]");
  if (button) {
    event.preventDefault();
    act(button);
    return;
  }
  const bulkButton = event.target.closest("button[data-bulk]");
  if (bulkButton) {
    event.preventDefault();
    bulk(bulkButton);
    return;
  }
  const revoke = event.target.closest("button[data-revoke]");
  if (revoke) {
    event.preventDefault();
    if (!window.confirm("Revoke key " + revoke.dataset.revoke + "? Agents using it are refused from now on.")) return;
    try {
      await call("DELETE", "/v1/keys/" + encodeURIComponent(revoke.dataset.revoke));
      window.location.reload();
    } catch (err) {
      flash(err.message, true);
    }
  }
});

document.addEventListener("change", function (event) {
  if (event.target.id === "select-all") {
    document.querySelectorAll("input.pick").forEach(function (box) { box.checked = event.target.checked; });
  }
  if (event.target.id === "user-switcher") {
    const user = event.target.value;
    window.location.assign(ROOT + "/memories" + (user ? "?user_id=" + encodeURIComponent(user) : ""));
    return;
  }
  if (event.target.matches && event.target.matches("input.pick, #select-all")) updateBulk();
});
