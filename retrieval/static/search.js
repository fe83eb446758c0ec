"use strict";
// The search page: the form's state lives in the URL (?q=...&kind=...), so results can be linked and Back works.
const FIELDS = ["q", "kind", "source", "category", "year_from", "year_to", "author", "mode"];

async function loadChoices() {
  // the kinds and sources the API accepts, from its own OpenAPI document
  const schema = await fetchJSON("/openapi.json");
  const fields = schema.components.schemas.SearchRequest.properties;
  const choices = (field) => (field.anyOf || [field]).find((s) => s.type === "array").items.enum;
  for (const [id, field] of [["kind", fields.kinds], ["source", fields.sources]]) {
    const select = document.getElementById(id);
    for (const value of choices(field)) select.append(el("option", {value}, value));
  }
}

function requestFromForm() {
  const value = (id) => document.getElementById(id).value.trim();
  const body = {query: value("q"), n_results: 20, mode: value("mode") || "hybrid"};
  if (value("kind")) body.kinds = [value("kind")];
  if (value("source")) body.sources = [value("source")];
  if (value("category")) body.categories = [value("category")];
  if (value("author")) body.authors = [value("author")];
  for (const key of ["year_from", "year_to"]) if (value(key)) body[key] = parseInt(value(key), 10);
  return body;
}

function resultItem(hit) {
  const source = hit.url ? el("a", {href: hit.url, class: "source", rel: "noopener"}, "source") : null;
  return el("li", {class: "hit"},
    el("h2", {}, el("a", {href: statementHref(hit.theorem_id), class: "hit-title"}, hit.name),
      " ", el("span", {class: "kind"}, hit.kind)),
    el("p", {class: "paper"}, byline(hit), source ? " · " : "", source),
    el("p", {class: "snippet"}, hit.snippet));
}

async function runSearch() {
  const status = document.getElementById("status");
  const list = document.getElementById("results");
  const body = requestFromForm();
  if (!body.query) return;
  status.textContent = "Searching…";
  list.replaceChildren();
  try {
    const answer = await fetchJSON("/search", {method: "POST", headers: {"Content-Type": "application/json"},
                                              body: JSON.stringify(body)});
    status.textContent = answer.n_results ? `${answer.n_results} results` : "No results";
    list.replaceChildren(...answer.results.map(resultItem));
    typeset(list);
  } catch (error) {
    status.textContent = "Error: " + error.message;
  }
}

function syncUrl() {
  const params = new URLSearchParams();
  for (const id of FIELDS) { const v = document.getElementById(id).value.trim(); if (v) params.set(id, v); }
  history.pushState(null, "", "/?" + params.toString());
}

function loadFromUrl() {
  const params = new URLSearchParams(location.search);
  for (const id of FIELDS) if (params.has(id)) document.getElementById(id).value = params.get(id);
  if (["kind", "source", "category", "year_from", "year_to", "author"].some((k) => params.get(k)))
    document.getElementById("filters").open = true;
  if (params.get("q")) runSearch();
}

document.addEventListener("DOMContentLoaded", async () => {
  document.getElementById("search").addEventListener("submit", (event) => {
    event.preventDefault();
    syncUrl();
    runSearch();
  });
  window.addEventListener("popstate", loadFromUrl);
  document.addEventListener("keydown", (event) => {
    const typing = ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement.tagName);
    if (event.key === "/" && !typing) { event.preventDefault(); document.getElementById("q").focus(); }
  });
  try { await loadChoices(); } catch (error) { document.getElementById("status").textContent = "Error: " + error.message; }
  loadFromUrl();
});
