// Opens a refitwire report page in Debian's chromium (headless, driven by playwright-core) and
// prints what a person would see as one JSON object: the verdict, the grid, the cases of one
// clicked cell, every request the page made, console errors, and how long it took to be ready.
// usage: node probe.mjs PAGE.html [--click WRITER=>READER | --click-bad] [--shot FILE] [--shot-cell FILE]
import { chromium } from "playwright-core";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { pathToFileURL } from "node:url";

const args = process.argv.slice(2);
const pagePath = resolve(args[0]);
const option = (name) => { const i = args.indexOf(name); return i >= 0 ? args[i + 1] : undefined; };
const profile = mkdtempSync(join(tmpdir(), "refitwire-chromium-"));
const executablePath = process.env.REFITWIRE_CHROMIUM || "/usr/bin/chromium";
const context = await chromium.launchPersistentContext(profile, {
  executablePath, headless: true, viewport: { width: 1400, height: 900 },
  args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync"],
});
const out = { requests: [], blocked: [], console_errors: [], page_errors: [] };
try {
  const url = pathToFileURL(pagePath).href;
  // Anything but the page itself is recorded and refused: the page must need nothing else.
  await context.route("**/*", (route) => {
    const u = route.request().url();
    if (u === url) return route.continue();
    out.blocked.push(u);
    return route.abort();
  });
  const page = context.pages()[0] || (await context.newPage());
  page.on("request", (r) => out.requests.push(r.url()));
  page.on("console", (m) => { if (m.type() === "error") out.console_errors.push(m.text()); });
  page.on("pageerror", (e) => out.page_errors.push(String(e)));
  const t0 = Date.now();
  await page.goto(url, { waitUntil: "load" });
  await page.waitForSelector("body[data-ready=true]", { timeout: 30000 });
  out.ready_ms = Date.now() - t0;  // navigation to a rendered, clickable grid, measured from outside
  out.ready_in_page_ms = await page.evaluate(() => performance.now());
  out.title = await page.title();
  out.verdict = await page.textContent("#verdict");
  out.completeness = await page.textContent("#completeness");
  out.footer = await page.textContent("#footer-note");
  // what the page opens with, and whether all of it is on the first screen
  out.first_fix = await page.$eval("#first-fix", (e) => ({ text: e.textContent, bottom: e.getBoundingClientRect().bottom,
    rerun: [...e.querySelectorAll(".rerun pre")].map((p) => p.textContent) })).catch(() => null);
  out.viewport_height = page.viewportSize().height;
  out.cell_counts = await page.$$eval("#grid td.cell button", (xs) => xs.map((x) => x.textContent)).catch(() => []);
  out.grid = await page.evaluate(() => {
    const grid = document.getElementById("grid");
    if (!grid) return null;
    const rows = [...grid.querySelectorAll("tbody tr")];
    return {
      readers: [...grid.querySelectorAll("thead th[scope=col]")].map((th) => th.textContent),
      writers: rows.map((tr) => tr.querySelector("th").textContent),
      cells_per_row: rows.map((tr) => tr.querySelectorAll("td").length),
      cells: [...grid.querySelectorAll("td.cell")].map((td) => ({
        writer: td.dataset.writer, reader: td.dataset.reader, standing: [...td.classList].find((c) => c.startsWith("s-")) })),
    };
  });
  out.standings = await page.$$eval("#standings tbody tr", (rows) => rows.length).catch(() => null);
  out.findings = await page.$$eval(".finding", (xs) => xs.map((x) => x.textContent)).catch(() => []);
  out.witnesses = await page.$$eval(".witness pre", (xs) => xs.map((x) => x.textContent)).catch(() => []);
  out.baseline = await page.$$eval(".baseline pre", (xs) => xs.map((x) => x.textContent)).catch(() => []);
  if (option("--shot")) await page.screenshot({ path: option("--shot"), fullPage: false });
  let target = null;
  if (option("--click")) {
    const [w, r] = option("--click").split("=>");
    target = `td.cell[data-writer="${w}"][data-reader="${r}"]`;
  } else if (args.includes("--click-bad")) {
    target = "td.cell:not(.s-passed):not(.s-skipped)";
  }
  if (target) {
    const cell = await page.$(target);
    if (cell) {
      const t1 = Date.now();
      await cell.click();
      await page.waitForSelector("#cell-title");
      out.click_ms = Date.now() - t1;
      out.cell = await page.evaluate(() => ({
        title: document.getElementById("cell-title").textContent,
        groups: [...document.querySelectorAll("#cases details.group > summary")].map((s) => s.textContent),
        cases: [...document.querySelectorAll("#cases li.case")].map((li) => ({
          id: li.querySelector(".case-id").textContent,
          reason: li.querySelector(".reason").textContent,
          text: li.textContent,
          rerun: [...li.querySelectorAll(".rerun pre")].map((p) => p.textContent).pop(),
        })),
      }));
      if (option("--shot-cell")) {
        await page.screenshot({ path: option("--shot-cell"), fullPage: false });  // the case list, scrolled to
      }
    } else out.cell = null;
  }
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
process.stdout.write(JSON.stringify(out) + "\n");
