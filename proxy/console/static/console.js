// query-guard console: poll /ui/state.json twice a second; when a query arrived (or a minute
// passed), fetch the re-rendered panels (/ui/panels, escaped by the server's templates) and
// swap them in. No inline script, no other origin (the page's Content-Security-Policy).
"use strict";
(function () {
  const PERIOD_MS = 500;
  const panels = document.getElementById("panels");
  const live = document.getElementById("live");
  let seq = panels.dataset.seq;
  let minute = panels.dataset.minute;

  function status(text, ok) {
    live.textContent = text;
    live.classList.toggle("down", !ok);
  }

  function openRepairs() {
    const open = new Set();
    panels.querySelectorAll("article.query details[open]").forEach(function (d) {
      open.add(d.closest("article").dataset.id);
    });
    return open;
  }

  async function refresh() {
    const answer = await fetch("/ui/panels", { cache: "no-store", credentials: "same-origin" });
    if (!answer.ok) throw new Error("panels: HTTP " + answer.status);
    const html = await answer.text();
    const open = openRepairs();
    const doc = new DOMParser().parseFromString(html, "text/html");
    panels.replaceChildren(...doc.body.childNodes);
    panels.querySelectorAll("article.query details").forEach(function (d) {
      if (open.has(d.closest("article").dataset.id)) d.open = true;
    });
  }

  async function poll() {
    try {
      const answer = await fetch("/ui/state.json", { cache: "no-store", credentials: "same-origin" });
      if (!answer.ok) throw new Error("state: HTTP " + answer.status);
      const state = await answer.json();
      if (String(state.seq) !== seq || String(state.minute) !== minute) {
        await refresh();
        seq = String(state.seq);
        minute = String(state.minute);
        panels.dataset.seq = seq;
        panels.dataset.minute = minute;
      }
      status("live", true);
    } catch (err) {
      status("disconnected, retrying", false);
    }
    window.setTimeout(poll, PERIOD_MS);
  }

  window.setTimeout(poll, PERIOD_MS);
})();
