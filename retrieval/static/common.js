"use strict";
// Shared by the search page and the statement page: DOM building and math typesetting.

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined) continue;
    if (key === "class") node.className = value; else node.setAttribute(key, value);
  }
  for (const child of children) {
    if (child === null || child === undefined || child === "") continue;
    node.append(child instanceof Node ? child : String(child));
  }
  return node;
}

function typeset(node) {
  // KaTeX's auto-render over $...$, $$...$$, \(...\) and \[...\]; text that fails to parse stays as written.
  if (typeof renderMathInElement !== "function") return;
  renderMathInElement(node, {
    delimiters: [
      {left: "$$", right: "$$", display: true}, {left: "\\[", right: "\\]", display: true},
      {left: "\\(", right: "\\)", display: false}, {left: "$", right: "$", display: false},
    ],
    throwOnError: false,
  });
}

function statementHref(theoremId) {
  return "/statement?id=" + encodeURIComponent(theoremId);
}

function byline(paper) {
  const authors = (paper.authors || []);
  const shown = authors.slice(0, 3).join(", ") + (authors.length > 3 ? " et al." : "");
  return [paper.title || paper.paper_title || paper.paper_id, shown, paper.year].filter(Boolean).join(" · ");
}

async function fetchJSON(url, options) {
  const response = await fetch(url, options);
  const body = await response.json().catch(() => ({error: "the server answered " + response.status}));
  if (!response.ok) throw new Error(body.error || ("HTTP " + response.status));
  return body;
}
