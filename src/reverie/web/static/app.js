// reverie dashboard: the buttons call the REST API (same origin) and reload the page.
"use strict";

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
  const res = await fetch(path, init);
  if (!res.ok) {
    let detail = res.statusText;
    try { const p = await res.json(); detail = (p.error || "") + ": " + (p.detail || ""); } catch (e) { /* not JSON */ }
    throw new Error(detail);
  }
  return res.status === 204 ? null : res.json();
}

async function act(button) {
  const action = button.dataset.action;
  const holder = button.closest("[data-id]");
  const id = holder ? encodeURIComponent(holder.dataset.id) : null;
  const base = "/v1/memories/" + id;
  try {
    button.disabled = true;
    if (action === "dream") {
      flash("dreaming…", false);
      await call("POST", "/v1/dream", {});
      window.location.assign("/dream");
      return;
    }
    if (action === "forget") {
      if (!window.confirm("Delete this memory for good? This cannot be undone.")) return;
      await call("DELETE", base);
      window.location.assign("/memories");
      return;
    }
    if (action === "invalidate") {
      const reason = window.prompt("Why is this memory no longer true?");
      if (!reason) return;
      await call("POST", base + "/invalidate", { reason: reason });
    } else {
      await call("POST", base + "/" + action);
    }
    window.location.reload();
  } catch (err) {
    flash(err.message, true);
  } finally {
    button.disabled = false;
  }
}

document.addEventListener("click", function (event) {
  const button = event.target.closest("button[data-action]");
  if (button) {
    event.preventDefault();
    act(button);
  }
});
