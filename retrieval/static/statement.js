"use strict";
// A statement's page: statement, proof, the statements it uses and that use it, restatements, citation.

function neighbourList(title, items, empty) {
  const section = el("section", {class: "neighbours"}, el("h2", {}, title));
  if (!items.length) { section.append(el("p", {class: "empty"}, empty)); return section; }
  section.append(el("ul", {}, ...items.map((n) => el("li", {},
    el("a", {href: statementHref(n.theorem_id), class: "neighbour"}, n.name),
    n.paper_id ? el("span", {class: "paper"}, " · " + n.paper_id) : null,
    el("p", {class: "snippet"}, n.snippet)))));
  return section;
}

function citationBlock(text) {
  const box = el("textarea", {id: "citation", readonly: "", rows: "3", "aria-label": "citation"});
  box.value = text;
  const button = el("button", {type: "button", id: "copy-citation"}, "Copy citation");
  button.addEventListener("click", async () => {
    box.select();
    try { await navigator.clipboard.writeText(text); } catch (e) { document.execCommand("copy"); }
    button.textContent = "Copied";
  });
  return el("section", {class: "citation"}, el("h2", {}, "Cite"), box, button);
}

async function showStatement() {
  const main = document.getElementById("statement");
  const id = new URLSearchParams(location.search).get("id");
  if (!id) { document.getElementById("status").textContent = "No statement id given."; return; }
  try {
    const s = await fetchJSON("/statements/" + encodeURIComponent(id));
    document.title = `${s.name} · thmforge`;
    const paper = s.paper || {paper_id: s.paper_id};
    const source = s.url ? el("a", {href: s.url, rel: "noopener"}, "source") : null;
    main.replaceChildren(
      el("article", {class: "statement"},
        el("h1", {id: "statement-name"}, s.name, " ", el("span", {class: "kind"}, s.kind)),
        el("p", {class: "paper"}, el("a", {href: "/?q=" + encodeURIComponent(paper.title || s.paper_id) +
                                            "&mode=lexical"}, byline(paper)), source ? " · " : "", source),
        s.section_path.length ? el("p", {class: "section"}, s.section_path.join(" › ")) : null,
        el("div", {class: "body", id: "statement-body"}, s.statement_latex || s.statement_text || ""),
        s.proof_latex ? el("details", {class: "proof", open: ""}, el("summary", {}, "Proof"),
                                     el("div", {class: "body"}, s.proof_text || s.proof_latex)) : null),
      neighbourList("Uses", s.uses, "No recorded dependencies."),
      neighbourList("Used by", s.used_by, "No statement of the corpus is recorded as using this one."),
      neighbourList("Restated elsewhere", s.restatements, "No restatement found in other papers."),
      citationBlock(s.citation));
    typeset(main);
  } catch (error) {
    document.getElementById("status").textContent = "Error: " + error.message;
  }
}

document.addEventListener("DOMContentLoaded", showStatement);
