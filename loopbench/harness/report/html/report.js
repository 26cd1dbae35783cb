"use strict";
(() => {
  // Every text from the results goes into the page as a text node (textContent), never as HTML.
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const runs = data.runs;

  function el(tag, className, ...children) {
    const node = document.createElement(tag);
    if (className) node.className = className;
    for (const child of children) if (child !== null && child !== undefined) node.append(child);
    return node;
  }

  // Sorting: any table.sortable, by a cell's data-sort when it has one, else its text.
  function sortKey(cell) {
    const raw = cell.dataset.sort !== undefined ? cell.dataset.sort : cell.textContent.trim();
    if (raw === "" || raw === "—" || raw === "·" || raw === "None") return null;
    const number = /^[+\-\u2212]?\$?\d/.test(raw) ? parseFloat(raw.replace(/[,$%+]/g, "").replace("\u2212", "-")) : NaN;
    return Number.isNaN(number) ? raw.toLowerCase() : number;
  }

  function compare(a, b) {
    if (typeof a === "number" && typeof b === "number") return a - b;
    return String(a).localeCompare(String(b), undefined, { numeric: true });
  }

  function makeSortable(table) {
    const headers = Array.from(table.tHead.rows[0].cells);
    headers.forEach((th, column) => {
      th.tabIndex = 0;
      const sort = () => {
        const ascending = th.getAttribute("aria-sort") !== "ascending";
        headers.forEach((h) => h.removeAttribute("aria-sort"));
        th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
        const body = table.tBodies[0];
        const rows = Array.from(body.rows).filter((row) => row.cells.length > column);
        const keyed = rows.map((row) => [sortKey(row.cells[column]), row]);
        keyed.sort(([a], [b]) => {
          if (a === null || b === null) return a === b ? 0 : a === null ? 1 : -1; // missing last
          return ascending ? compare(a, b) : compare(b, a);
        });
        for (const [, row] of keyed) body.append(row);
      };
      th.addEventListener("click", sort);
      th.addEventListener("keydown", (event) => { if (event.key === "Enter") sort(); });
    });
  }

  // The run list.
  const money = (value) => (value === null ? "—" : value.toFixed(value >= 1 ? 2 : value >= 0.01 ? 4 : 6));
  const failed = (run) => run.correct === false || run.status !== "answered";

  function statusNode(status) {
    const dot = el("span", "dot");
    dot.style.background = data.colours[status] || "#999";
    return el("span", null, dot, status);
  }

  function verdictNode(run) {
    if (run.correct === true) return el("span", "yes", "✓ correct");
    if (run.correct === false) return el("span", "no", "✗ wrong");
    if (run.grade_status) return el("span", "muted", `not graded: ${run.grade_status} (grade --regrade)`);
    return el("span", "muted", "not graded");
  }

  function labelChips(run) {
    const box = el("span");
    for (const label of run.labels) {
      const chip = el("span", "chip", label);
      chip.title = data.rules[label] || "";
      box.append(chip);
    }
    return box;
  }

  function cell(content, className, sort) {
    const td = el("td", className, content);
    if (sort !== undefined) td.dataset.sort = sort === null ? "" : String(sort);
    return td;
  }

  const tbody = document.querySelector("#run-table tbody");
  runs.forEach((run, index) => {
    const row = el(
      "tr", null,
      cell(run.arm), cell(run.task), cell(String(run.repeat), "num"), cell(statusNode(run.status), null, run.status),
      cell(verdictNode(run), null, run.correct === null ? null : run.correct ? 1 : 0),
      cell(labelChips(run), null, run.labels.join(", ")),
      cell(String(run.turns), "num"), cell(run.tokens_in.toLocaleString("en"), "num", run.tokens_in),
      cell(run.tokens_out.toLocaleString("en"), "num", run.tokens_out), cell(money(run.cost), "num", run.cost),
    );
    row.dataset.index = String(index);
    row.tabIndex = 0;
    run.haystack = [run.arm, run.task, run.status, ...run.labels].join(" \u0000 ").toLowerCase();
    tbody.append(row);
  });
  tbody.addEventListener("click", (event) => {
    const row = event.target.closest("tr");
    if (row) openTrace(Number(row.dataset.index));
  });
  tbody.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && event.target.dataset.index) openTrace(Number(event.target.dataset.index));
  });

  // Search: words match any of arm, task, status and labels; field:value (quoted when it has
  // spaces) matches that field exactly: arm, task, status, label, correct (yes/no/none), failed.
  const search = document.getElementById("search");
  const count = document.getElementById("count");
  const FIELDS = {
    arm: (run, value) => run.arm.toLowerCase() === value,
    task: (run, value) => run.task.toLowerCase() === value,
    status: (run, value) => run.status.toLowerCase() === value,
    label: (run, value) => run.labels.some((label) => label.toLowerCase() === value),
    correct: (run, value) => String(run.correct === null ? "none" : run.correct ? "yes" : "no") === value,
    failed: (run, value) => (failed(run) ? "yes" : "no") === value,
    repeat: (run, value) => String(run.repeat) === value,
  };

  function parseQuery(text) {
    const terms = [];
    const pattern = /(\w+):"([^"]*)"?|(\w+):(\S+)|"([^"]*)"?|(\S+)/g;
    for (const match of text.toLowerCase().matchAll(pattern)) {
      const field = match[1] || match[3];
      const value = match[2] !== undefined ? match[2] : match[4];
      if (field && FIELDS[field]) terms.push((run) => FIELDS[field](run, value));
      else {
        const word = match[5] !== undefined ? match[5] : match[0];
        terms.push((run) => run.haystack.includes(word));
      }
    }
    return terms;
  }

  function applySearch() {
    const terms = parseQuery(search.value.trim());
    let shown = 0;
    for (const row of tbody.rows) {
      const run = runs[Number(row.dataset.index)];
      const keep = terms.every((term) => term(run));
      row.hidden = !keep;
      shown += keep;
    }
    count.textContent = `${shown} of ${runs.length} runs`;
  }
  search.addEventListener("input", applySearch);

  function showRuns(query) {
    search.value = query;
    applySearch();
    document.getElementById("runs").scrollIntoView({ behavior: "smooth" });
  }
  document.querySelectorAll("td[data-query]").forEach((td) => {
    td.addEventListener("click", () => showRuns(td.dataset.query));
  });

  const onlyFlips = document.getElementById("only-flips");
  onlyFlips.addEventListener("change", () => {
    for (const row of document.querySelectorAll(".matrix tbody tr")) {
      row.hidden = onlyFlips.checked && !row.classList.contains("flip");
    }
  });

  // The trace of one run, as a conversation.
  const panel = document.getElementById("trace");
  const backdrop = document.getElementById("backdrop");
  const body = document.getElementById("trace-body");
  let opener = null;

  function pre(text) {
    // guard: report-shows-model-text-as
    return el("pre", null, text);
  }

  function turn(kind, who, meta, ...content) {
    return el("div", `turn ${kind}`, el("div", "who", el("span", null, who), meta ? el("span", "muted", meta) : null), ...content);
  }

  function calls(list) {
    return (list || []).map((c) => el("div", "call mono", `→ ${c.name}(${c.args})`));
  }

  function shortJson(value) {
    const text = typeof value === "string" ? value : JSON.stringify(value);
    return text.length > 600 ? `${text.slice(0, 600)} …` : text;
  }

  function entryNode(entry) {
    switch (entry.k) {
      case "system": {
        const tools = entry.tools && entry.tools.length ? ` · tools: ${entry.tools.join(", ")}` : "";
        const details = el("details", "system", el("summary", null, `System prompt${tools}`), pre(data.systems[entry.ref]));
        return details;
      }
      case "example": {
        const details = el("details", "system", el("summary", null, `A worked example in the prompt (${entry.messages.length} messages)`));
        for (const message of entry.messages) details.append(entryNode(message));
        return details;
      }
      case "message":
        if (entry.question) {
          return turn("user", "user", "the question, above");
        }
        return turn(entry.role === "assistant" ? "prompt" : entry.role === "user" ? "user" : "tool",
          entry.role === "tool" ? "tool result, as shown to the model" : entry.role,
          entry.role === "assistant" ? "written into the prompt, not a reply" : null,
          entry.text ? pre(entry.text) : null, ...calls(entry.calls));
      case "reply": {
        const meta = [entry.finish && `finish ${entry.finish}`, `${entry.in ?? "?"} in / ${entry.out ?? "?"} out tokens`,
          entry.cached ? "replayed from cache" : "", entry.retries ? `${entry.retries} retries` : ""].filter(Boolean).join(" · ");
        return turn("reply", "model", meta, entry.text ? pre(entry.text) : null, ...calls(entry.calls));
      }
      case "tool":
        return turn(`tool${entry.ok ? "" : " failed"}`, `tool ${entry.tool}(${entry.args})`, entry.ok ? "ok" : "failed", pre(entry.result));
      case "error":
        return turn("error", "API error", [entry.status ? `HTTP ${entry.status}` : "", `${entry.retries} retries`].filter(Boolean).join(" · "), pre(entry.text));
      case "again":
        return el("div", "again", entry.same ? `call ${entry.call}: the same prompt again` : `call ${entry.call}: a new conversation`);
      default: {
        const node = el("div", "event", el("b", null, entry.kind));
        for (const [key, value] of Object.entries(entry.detail || {})) node.append(`  ${key}: ${shortJson(value)}`);
        return node;
      }
    }
  }

  function fact(list, key, value) {
    if (value === null || value === undefined || value === "") return;
    list.append(el("dt", null, key), el("dd", null, value));
  }

  function openTrace(index) {
    const run = runs[index];
    if (!run) return;
    opener = document.activeElement;
    document.getElementById("trace-title").textContent = `${run.arm} · ${run.task} · repeat ${run.repeat}`;
    body.replaceChildren();
    const verdict = el("dl", "verdict");
    fact(verdict, "ended", statusNode(run.status));
    fact(verdict, "grade", run.correct === null && run.reason
      ? el("span", "muted", run.reason) : el("span", null, verdictNode(run), run.reason ? ` — ${run.reason}` : ""));
    fact(verdict, "answer", run.answer === null ? null : el("span", "mono", run.answer));
    fact(verdict, "failure labels", run.labels.length ? labelChips(run) : el("span", "muted", "none"));
    fact(verdict, "error", run.error);
    const many = (n, what) => `${n.toLocaleString("en")} ${what}${n === 1 ? "" : "s"}`;
    // The shares of the tokens, only for runs that recorded some (see _runs.py).
    const written = run.tokens_cache_write ? ` (${run.tokens_cache_write.toLocaleString("en")} written to the cache)` : "";
    const reasoning = run.tokens_reasoning ? ` (${run.tokens_reasoning.toLocaleString("en")} reasoning)` : "";
    fact(verdict, "cost", `${many(run.turns, "model call")}, ${many(run.tool_calls, "tool call")}, ${many(run.tokens_in, "token")} in${written}, ${run.tokens_out.toLocaleString("en")} out${reasoning}, $${money(run.cost)}, ${run.latency} s`);
    fact(verdict, "run id", el("span", "mono", run.id));
    body.append(verdict);
    const question = run.question !== undefined ? run.question : data.questions[run.task];
    if (question) body.append(el("div", "question", el("div", "who", "Question"), pre(question)));
    if (run.trace === null) body.append(el("p", "muted", "No trace for this run in traces.jsonl: only its record is known."));
    else for (const entry of run.trace) body.append(entryNode(entry));
    panel.hidden = false;
    backdrop.hidden = false;
    body.scrollTop = 0;
    document.getElementById("trace-close").focus();
    if (run.id) history.replaceState(null, "", `#run=${run.id}`);
  }

  function closeTrace() {
    if (panel.hidden) return;
    panel.hidden = true;
    backdrop.hidden = true;
    history.replaceState(null, "", location.pathname + location.search);
    if (opener) opener.focus();
  }
  document.getElementById("trace-close").addEventListener("click", closeTrace);
  backdrop.addEventListener("click", closeTrace);
  document.addEventListener("keydown", (event) => { if (event.key === "Escape") closeTrace(); });

  document.querySelectorAll("table.sortable").forEach(makeSortable);
  document.querySelectorAll("#summary table").forEach((table) => { table.classList.add("sortable"); makeSortable(table); });
  applySearch();
  const linked = location.hash.match(/^#run=(\w+)$/);
  if (linked) openTrace(runs.findIndex((run) => run.id === linked[1]));
})();
