// The refitwire report page: renders the inline report data; loads nothing from anywhere.
(function () {
  "use strict";
  const data = JSON.parse(document.getElementById("report-data").textContent);
  const app = document.getElementById("app");
  const esc = (s) => String(s == null ? "" : s).replace(/[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]);
  const VECTORS = "(vectors)";
  const STANDINGS = [["required", "Required failures or unexpected passes"], ["errored", "errored"],
    ["recommended", "Recommended failures"], ["expected", "expected failures only"], ["passed", "passed"],
    ["skipped", "skipped"]];

  function copyButton(text) {
    return `<button class="copy" type="button" data-copy="${esc(text)}">copy</button>`;
  }
  function copyable(text) {
    return `<div class="rerun"><pre>${esc(text)}</pre>${copyButton(text)}</div>`;
  }
  document.addEventListener("click", (event) => {
    const button = event.target.closest("button.copy");
    if (!button) return;
    const text = button.dataset.copy;
    const done = () => { button.textContent = "copied"; setTimeout(() => { button.textContent = "copy"; }, 1200); };
    const select = () => {  // file:// pages may have no clipboard API: select the text instead
      const range = document.createRange();
      range.selectNodeContents(button.previousElementSibling);
      const selection = window.getSelection();
      selection.removeAllRanges(); selection.addRange(range);
      try { if (document.execCommand("copy")) done(); } catch (e) { /* left selected */ }
    };
    if (navigator.clipboard && window.isSecureContext) navigator.clipboard.writeText(text).then(done, select);
    else select();
  });

  function facts(pairs) {
    return "<dl class=facts>" + pairs.filter((p) => p[1] !== undefined && p[1] !== null && p[1] !== "")
      .map(([k, v]) => `<dt>${esc(k)}</dt><dd>${v}</dd>`).join("") + "</dl>";
  }

  // -- what to fix first: the page opens with it ---------------------------------------------
  function fixPanel(fix, title) {
    return `<h2>${esc(title)}</h2><p class="headline" id="fix-headline">${esc(fix.headline)}</p>` +
      `<div class="reason" id="fix-example">e.g. <span class="mono case-id">${esc(fix.case)}</span>: ${esc(fix.message)}</div>` +
      `<div class=muted>rerun it alone, every answer in full:</div><div id="fix-rerun">${copyable(fix.rerun)}</div>`;
  }
  function leadPanel() {
    const fix = data.first_fix, better = data.first_improvement;
    if (fix) {
      const title = data.verdict === "incomplete" ? "First thing to fix (in the part that ran)" : "First thing to fix";
      return `<section id="first-fix" class="lead lead-fix">${fixPanel(fix, title)}</section>`;
    }
    if (data.verdict === "incomplete") {
      return '<section id="first-fix" class="lead lead-incomplete"><h2>Nothing failed so far</h2><p>The run stopped before it finished: rerun it to the end.</p></section>';
    }
    let out = '<section id="first-fix" class="lead lead-ok"><h2>Nothing to fix</h2><p id="fix-headline">No case counts against the run: every Required case passed';
    out += better ? "; the Recommended failures below are not enforced.</p>" : " and nothing else failed.</p>";
    if (better) out += `<details id="first-improvement"><summary>First to improve: ${esc(better.headline)}</summary>${fixPanel(better, "First to improve")}</details>`;
    return out + "</section>";
  }

  // -- matrix and conformance reports ------------------------------------------------------
  function renderMatrix() {
    const h = data.header, f = data.footer;
    const who = {};
    data.participants.forEach((p) => { who[p.label] = p; });
    const label = (l) => {
      const p = who[l];
      if (!p) return `<span title="the golden vectors">${esc(l)}</span>`;
      const title = `${p.name} ${p.version} (${p.language}, spec ${p.spec_version})` + (p.commit ? `, commit ${p.commit}` : "");
      const mark = p.released ? '<span class="rel" title="a released package">released</span>'
        : p.kind === "candidate" ? '<span class="rel cand">candidate</span>' : "";
      return `<span title="${esc(title)}">${esc(l)}</span>${mark}`;
    };
    let out = `<h1>refitwire ${esc(data.kind)} <span class="verdict v-${esc(data.verdict)}" id="verdict">${esc(data.verdict.toUpperCase())}</span></h1>`;
    out += leadPanel();
    out += facts([
      ["seed", `<code>${esc(h.seed)}</code> (${esc(h.examples)} generated payloads)`],
      ["kit", esc(h.kit || "unknown (an older report)")],
      ["spec versions", esc((h.spec_versions || []).join(", ") || "unknown")],
      ["released readers and writers", esc(h.upstream)],
      ["not run", h.unavailable.length ? esc(h.unavailable.join("; ")) : ""],
      ["started", esc(h.started_at)], ["python", esc(h.python)],
      ["duration", f ? `${esc(f.seconds)} s, ${esc(data.cases)} cases` : "unknown: the run did not finish"],
    ]);
    out += data.footer
      ? `<div class="banner complete" id="completeness">Complete: the report has its footer (${esc(data.cases)} cases).</div>`
      : `<div class="banner incomplete" id="completeness">INCOMPLETE: the report has no footer; the run stopped before it finished (${esc(data.cases)} cases so far). This is not a pass.</div>`;
    out += "<h2>Writers × readers</h2><p class=legend>" + STANDINGS.map(([k, t]) =>
      `<span><i style="background:var(--${({required: "req", errored: "err", recommended: "rec", expected: "exp", passed: "ok", skipped: "skip"})[k]})"></i>${esc(t)}</span>`).join("") +
      "</p><p class=muted>Click a cell for its cases, grouped by symptom.</p>";
    const index = {};
    data.cells.forEach((c, i) => { index[c.w + "\u0000" + c.r] = i; });
    out += '<div class="grid-wrap"><table class="grid" id="grid"><thead><tr><th>writer \\ reader</th>';
    out += data.readers.map((r) => `<th scope="col">${label(r)}</th>`).join("") + "</tr></thead><tbody>";
    for (const w of data.writers) {
      out += `<tr><th scope="row">${label(w)}</th>`;
      for (const r of data.readers) {
        const i = index[w + "\u0000" + r];
        if (i === undefined) { out += '<td class="none"></td>'; continue; }
        const c = data.cells[i], n = c.counts;
        const bad = ["failed", "errored", "xpassed"].reduce((a, o) => a + (n["required." + o] || 0) + (n["recommended." + o] || 0), 0);
        const exp = (n["required.xfailed"] || 0) + (n["recommended.xfailed"] || 0);
        const all = Object.values(n).reduce((a, b) => a + b, 0);
        const pass = (n["required.passed"] || 0) + (n["recommended.passed"] || 0);
        // counts say what they count: "98 failing of 206", never a bare 98/206
        const first = bad ? `${bad} failing of ${all}` : `${pass} passed of ${all}`;
        const second = (bad ? `${pass} passed` : "none failing") + (exp ? `, ${exp} expected` : "");
        out += `<td class="cell s-${c.standing}" data-cell="${i}" data-writer="${esc(w)}" data-reader="${esc(r)}" title="${esc(w + " → " + r + ": " + c.text)}">` +
          `<button type="button"><span class="n">${first}</span><span class="d">${second}</span></button></td>`;
      }
      out += "</tr>";
    }
    out += '</tbody></table></div><section id="cases"><p class="muted">Click a cell for its cases.</p></section>';
    out += "<h2>Per implementation</h2><table class=plain id=standings><thead><tr><th>participant</th><th>named itself</th><th>cases</th><th>Required failing</th><th>Recommended failing</th><th>expected</th><th>badge</th></tr></thead><tbody>";
    for (const s of data.standings) {
      const p = who[s.label] || {};
      out += `<tr><td>${label(s.label)}</td><td>${esc(p.name)} ${esc(p.version)} (${esc(p.language)}, spec ${esc(p.spec_version)})</td><td>${s.cases}</td><td>${s.required_failed}</td><td>${s.recommended_failed}</td><td>${s.expected}</td><td>${s.badge}</td></tr>`;
    }
    out += "</tbody></table><p class=muted>A failure counts against the side at fault (else the writer). <code>refitwire report REPORT --badges DIR</code> writes each badge as an SVG file.</p>";
    out += `<h2>Text summary</h2><pre id="summary">${esc(data.summary.join("\n"))}</pre>`;
    out += `<footer><p id="footer-note" class="muted">${data.footer ? "The report was complete: header, " + esc(data.cases) + " results, footer." : "The report has no footer: INCOMPLETE."} ${esc(data.inputs_note)}</p></footer>`;
    app.innerHTML = out;
    document.getElementById("grid").addEventListener("click", (event) => {
      const td = event.target.closest("td.cell");
      if (td) showCell(Number(td.dataset.cell), td);
    });
    if (data.first_fix) {  // the cell of the first thing to fix is open below the grid, unscrolled
      const i = data.first_fix.cell_index;
      showCell(i, document.querySelector(`td.cell[data-cell="${i}"]`), false);
    }
  }

  function inputHtml(key) {
    const x = data.inputs[key];
    if (!x) return '<div class="muted">input: not carried by this page (the rerun command prints it)</div>';
    let out = `<div>input: ${esc(x.description)}</div>`;
    if (x.payload !== undefined) out += `<div class=muted>payload (JSON)</div><pre>${esc(x.payload)}</pre>`;
    if (x.blob_b64 !== undefined) {
      out += `<div class=muted>blob as text (${x.blob_bytes} bytes)</div><pre>${x.blob_text === null ? "(not UTF-8)" : esc(x.blob_text)}</pre>`;
      out += `<div class=muted>blob as base64</div>${copyable(x.blob_b64)}`;
    } else if (x.blob_bytes !== undefined) out += `<div class=muted>blob: ${x.blob_bytes} bytes (too long to show)</div>`;
    return out;
  }

  function showCell(i, td, scroll = true) {
    const c = data.cells[i];
    document.querySelectorAll("td.cell.selected").forEach((x) => x.classList.remove("selected"));
    if (td) td.classList.add("selected");
    let out = `<h2 id="cell-title">${esc(c.w)} → ${esc(c.r)}</h2><p>${esc(c.text)}</p>`;
    if (!c.groups.length) out += '<p class="muted" id="no-failures">Every case in this cell passed (or was skipped).</p>';
    c.groups.forEach((g, gi) => {
      const where = g.fault ? `${g.side} at fault` : `in ${c.w} → ${c.r}`;
      const title = g.outcome === "xfailed" ? "EXPECTED" : g.outcome.toUpperCase();
      out += `<details class="group t-${esc(g.tier)} o-${esc(g.outcome)}"${gi < 3 ? " open" : ""}><summary>${esc(title)} ${esc(g.tier)} ×${g.count}: ${esc(g.symptom)} <span class=muted>(${esc(where)})</span></summary><ol class="case-list">`;
      for (const k of g.cases) {
        out += `<li class="case"><span class="case-id mono">${esc(k.case)}</span><span class=tag>${esc(k.tier)}</span><span class=tag>${esc(k.outcome)}</span>${k.fault ? `<span class=tag>${esc(k.fault)} at fault</span>` : ""}`;
        out += `<div class="reason">reason: ${esc(k.message)}</div>`;
        if (k.expected) out += `<div class="muted">listed as expected: ${esc(k.expected)}</div>`;
        out += inputHtml(k.input);
        out += `<div class=muted>rerun alone, every answer in full:</div>${copyable(k.rerun)}</li>`;
      }
      if (g.count > g.cases.length) out += `<li class=muted>and ${g.count - g.cases.length} more (the JSON-lines report has them all)</li>`;
      out += "</ol></details>";
    });
    const section = document.getElementById("cases");
    section.innerHTML = out;
    if (scroll) section.scrollIntoView({ block: "start" });
  }

  // -- the gate's report -------------------------------------------------------------------
  function renderGate() {
    const h = data.header, f = data.footer, m = data.matrix;
    let out = `<h1>${esc(data.title)} <span class="verdict v-${esc(data.verdict)}" id="verdict">${esc(String(data.verdict).toUpperCase())}</span></h1>`;
    out += facts([["against", `${esc(h.against)} <code>${esc((h.commit || "").slice(0, 12))}</code>`],
      ["candidates", esc((h.candidates || []).join(", "))],
      ["compared", esc((h.comparisons || []).map((c) => c.join(" → ")).join("; "))],
      ["exit code", f ? esc(f.exit_code) : ""]]);
    out += f ? `<div class="banner complete" id="completeness">Complete: ${f.findings} findings, ${f.failing} failing, ${f.unproven} unproven, ${f.accepted} accepted.</div>`
      : '<div class="banner incomplete" id="completeness">INCOMPLETE: the gate report has no footer. This is not a pass.</div>';
    out += `<h2>Findings (${data.findings.length})</h2>`;
    for (const x of data.findings) {
      const st = x.accepted ? "accepted" : x.unproven ? "unproven" : x.breaking ? "breaking" : "ok";
      out += `<div class="finding st-${st}"><div><b>${esc(st.toUpperCase())} ${esc(x.rule)}</b> <span class=tag>${esc(x.category)}</span><span class=tag>${esc(x.severity)}</span> ${esc(x.file)}${x.against ? " against " + esc(x.against) : ""}</div>`;
      out += `<div class=mono>pointer ${esc(JSON.stringify(x.pointer))} · path ${esc(x.path)} · change ${esc(x.change)}</div><p>${esc(x.detail)}</p>`;
      if (x.directions.length) out += `<div>breaks: ${esc(x.directions.map((d) => d.text + " (" + d.direction + ")").join(", "))}</div>`;
      for (const w of x.witnesses) {
        out += `<div class="witness"><div>witness (${esc(w.direction)}): accepted by ${esc(w.accepted_by)}; rejected by ${esc(w.rejected_by)}: ${esc(w.rejection)}</div>${copyable(w.blob_text)}</div>`;
      }
      for (const d of x.no_witness) out += `<div class=muted>no witness found (${esc(d.direction)})</div>`;
      if (x.baseline_text) out += `<div class="baseline"><div>to accept it, add to the baseline:</div>${copyable(x.baseline_text)}</div>`;
      if (x.accepted) out += `<div>accepted until ${esc(x.accepted.expires)}: ${esc(x.accepted.reason)} (${esc(x.accepted.link)})</div>`;
      out += "</div>";
    }
    out += "<h2>Runtime matrix</h2>";
    if (!m) out += "<p>No runtime matrix record.</p>";
    else {
      out += `<p><b>${esc(m.status)}</b>: ${esc(m.detail)}</p>`;
      if (m.missing.length) out += `<p>did not run: ${esc(m.missing.join(", "))}</p>`;
      const cells = {};
      (m.grid || []).forEach((c) => { cells[c.writer + "\u0000" + c.reader] = c; });
      const writers = [...new Set((m.grid || []).map((c) => c.writer))], readers = [...new Set((m.grid || []).map((c) => c.reader))];
      if (writers.length) {
        out += '<div class="grid-wrap"><table class="grid" id="grid"><thead><tr><th>writer \\ reader</th>' + readers.map((r) => `<th scope="col">${esc(r)}</th>`).join("") + "</tr></thead><tbody>";
        for (const w of writers) {
          out += `<tr><th scope="row">${esc(w)}</th>`;
          for (const r of readers) {
            const c = cells[w + "\u0000" + r];
            if (!c) { out += '<td class="none"></td>'; continue; }
            const s = c.failed ? "required" : c.expected ? "expected" : "passed";
            const first = c.failed ? `${c.failed} failing of ${c.cases}` : `${c.cases - c.expected} passed of ${c.cases}`;
            out += `<td class="cell s-${s}" data-writer="${esc(w)}" data-reader="${esc(r)}" title="${esc(c.first || "")}"><button type="button"><span class="n">${first}</span><span class="d">${c.failed ? c.cases - c.failed - c.expected + " passed" : "none failing"}${c.expected ? ", " + c.expected + " expected" : ""}</span></button></td>`;
          }
          out += "</tr>";
        }
        out += "</tbody></table></div><p class=muted>Required cases per cell; expected: failures inside an accepted break or across major lines.</p>";
      }
      if (m.failing.length) out += "<pre id=failing>" + esc(m.failing.join("\n")) + "</pre>";
      const rerun = /\(rerun: ([^)]*)\)/.exec(m.detail || "");
      if (rerun) out += `<div>rerun the matrix:</div>${copyable(rerun[1])}`;
    }
    out += `<footer><p id="footer-note" class="muted">${f ? "verdict " + esc(f.verdict) + ", exit " + esc(f.exit_code) : "no footer: INCOMPLETE"}</p></footer>`;
    app.innerHTML = out;
  }

  (data.kind === "gate" ? renderGate : renderMatrix)();
  document.body.dataset.ready = "true";
})();
