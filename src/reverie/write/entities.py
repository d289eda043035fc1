"""Regex entity extraction: tech and org names, max 8, ``entity://{kind}/{slug}`` URIs.

Known tech and org names come from small lexicons; other capitalised names in the middle of a
sentence (people, places, products) are kept as ``entity://name/{slug}`` so that coreference and
relations have something to hold on to.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reverie import lexicon
from reverie.text.words import STOPWORDS, slug

TECH = (
    "React",
    "Vue",
    "Angular",
    "Svelte",
    "Next.js",
    "Node.js",
    "Deno",
    "Docker",
    "Kubernetes",
    "Terraform",
    "PostgreSQL",
    "Postgres",
    "MySQL",
    "SQLite",
    "MongoDB",
    "Redis",
    "Kafka",
    "RabbitMQ",
    "Elasticsearch",
    "Python",
    "TypeScript",
    "JavaScript",
    "Rust",
    "Go",
    "Golang",
    "Java",
    "Kotlin",
    "Swift",
    "C#",
    "C++",
    "Ruby",
    "Rails",
    "Django",
    "Flask",
    "FastAPI",
    "Spring",
    "GraphQL",
    "REST",
    "gRPC",
    "JWT",
    "OAuth",
    "Linux",
    "macOS",
    "Windows",
    "AWS",
    "GCP",
    "Azure",
    "Lambda",
    "S3",
    "EC2",
    "Nginx",
    "Git",
    "GitHub Actions",
    "Jenkins",
    "pgvector",
    "LanceDB",
    "Neo4j",
    "PyTorch",
    "TensorFlow",
    "Pandas",
    "NumPy",
    "Vite",
    "Webpack",
    "Tailwind",
    "Ollama",
    "vLLM",
    "llama.cpp",
    "Supabase",
    "Vercel",
    "Netlify",
    "Heroku",
    "Prometheus",
    "Grafana",
)
ORGS = (
    "Google",
    "Anthropic",
    "OpenAI",
    "Microsoft",
    "Apple",
    "Amazon",
    "Meta",
    "Facebook",
    "Netflix",
    "Stripe",
    "GitHub",
    "GitLab",
    "Atlassian",
    "Slack",
    "Shopify",
    "Uber",
    "Airbnb",
    "Spotify",
    "Twitter",
    "IBM",
    "Oracle",
    "Intel",
    "Nvidia",
    "NVIDIA",
    "Mozilla",
    "Cloudflare",
    "Hugging Face",
    "DeepMind",
    "Mistral",
    "Tesla",
    "Samsung",
    "Turkcell",
    "Trendyol",
    "Getir",
)


def _alternation(names: tuple[str, ...]) -> re.Pattern[str]:
    ordered = sorted(names, key=len, reverse=True)
    body = "|".join(re.escape(n) for n in ordered)
    return re.compile(rf"(?<![\w.+#])({body})(?![\w+#]|\.\w)")


_TECH_RE = _alternation(TECH)
_ORG_RE = _alternation(ORGS)
_NAME_RE = re.compile(r"\b([A-ZÇĞİÖŞÜ][a-zçğıöşü]+(?:\s[A-ZÇĞİÖŞÜ][a-zçğıöşü]+)?)\b")
_VERBISH = ("ed", "ing", "ly")
#: capitalised words that start no name (days, months, greetings)
_NOT_NAMES = lexicon.words("entity_not_names")


@dataclass(frozen=True, slots=True)
class Entity:
    """One extracted entity: its surface text, its kind (tech, org, name) and its URI."""

    text: str
    kind: str

    @property
    def uri(self) -> str:
        return f"entity://{self.kind}/{slug(self.text)}"


def extract_entities(text: str, *, limit: int = 8) -> list[Entity]:
    """Tech, org and name entities in order of first appearance, distinct by URI, at most ``limit``."""
    found: list[tuple[int, Entity]] = []
    for kind, pattern in (("tech", _TECH_RE), ("org", _ORG_RE)):
        found.extend((m.start(), Entity(m.group(1), kind)) for m in pattern.finditer(text))
    taken = {e.text.casefold() for _, e in found}
    for m in _NAME_RE.finditer(text):
        name = m.group(1)
        first = name.split()[0].casefold()
        if name.casefold() in taken or first in _NOT_NAMES or first in STOPWORDS or first.endswith(_VERBISH):
            continue
        found.append((m.start(), Entity(name, "name")))
    out: dict[str, Entity] = {}
    for _, ent in sorted(found, key=lambda pair: pair[0]):
        out.setdefault(ent.uri, ent)
    return list(out.values())[:limit]


def entity_uris(text: str, *, limit: int = 8) -> list[str]:
    """The ``entity://`` URIs of :func:`extract_entities`."""
    return [e.uri for e in extract_entities(text, limit=limit)]
