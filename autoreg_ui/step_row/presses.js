// The step row's presses, counted in the browser: a click on Next token, Generate N or Undo, or the key N, G or U,
// is added to a running log sent to the server as one state value. Reruns that queue behind a running script
// merge into one; the log they carry still holds every press, and the server applies the ones it has not applied
// yet, in order.
const KINDS = ["next", "undo", "generate"];
const KEYS = { n: "next", u: "undo", g: "generate" };
const LOG_KEPT = 200;  // presses kept in the log: far more than can queue behind one run

function shared() {
  if (!window.__autoregPresses) {
    const all = { rows: {} };
    // Rows are kept per step row (its buttons' keys), so a row of a page left behind matches no button here.
    const live = () => Object.values(all.rows);
    const find = (kind) => live().find(row => row.keys[kind]
      && document.querySelector(`.st-key-${row.keys[kind]} button`));
    all.onClick = (event) => {
      const button = event.target instanceof Element ? event.target.closest("button") : null;
      if (!button || button.disabled) return;
      for (const row of live()) {
        const kind = KINDS.find(k => row.keys[k] && button.closest(`.st-key-${row.keys[k]}`));
        if (kind) {
          event.preventDefault();
          event.stopPropagation();
          row.press(kind);
          return;
        }
      }
    };
    all.onKey = (event) => {
      if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
      const kind = KEYS[(event.key || "").toLowerCase()];
      if (!kind) return;
      const target = event.target;
      if (target instanceof Element && (target.closest("input, textarea, select, [contenteditable]")
          || target.isContentEditable)) return;  // a text box keeps its letters
      const row = find(kind);
      if (!row) return;
      event.preventDefault();
      event.stopPropagation();
      if (event.repeat) return;  // a key held down is one press (and not Streamlit's shortcut either)
      row.press(kind);
    };
    window.addEventListener("click", all.onClick, true);  // before Streamlit's own handlers see the press
    window.addEventListener("keydown", all.onKey, true);
    window.__autoregPresses = all;
  }
  return window.__autoregPresses;
}

export default function (component) {
  const { data, setStateValue, parentElement } = component;
  const all = shared();
  // One row per step row of the server's session (data.row), kept across remounts: a page that redraws its
  // whole body mid-burst keeps the presses still to run and their numbers.
  const key = data.row;
  let row = all.rows[key];
  if (!row || row.epoch !== data.epoch) {  // a new session on the server: count from what it has applied
    row = all.rows[key] = { epoch: data.epoch, seq: data.applied, log: [] };
  }
  row.keys = data.keys;
  row.applied = Math.max(row.applied || 0, data.applied);
  row.seq = Math.max(row.seq, data.applied);
  row.queued = data.queued || 0;  // applied on the server but waiting there behind a Generate still to run
  const shown = parentElement.querySelector(".autoreg-pending");
  const show = row.show = () => {
    const left = row.seq - row.applied + row.queued;
    const text = left <= 0 ? "" : (left === 1 ? data.one : data.many.replace("{n}", String(left)));
    if (shown && shown.textContent !== text) shown.textContent = text;
  };
  row.press = (kind) => {
    row.seq += 1;
    row.log.push([row.seq, kind]);
    if (row.log.length > LOG_KEPT) row.log.splice(0, row.log.length - LOG_KEPT);
    setStateValue("log", { epoch: row.epoch, seq: row.seq, presses: row.log });
    row.show();
  };
  // Presses sent while the page was being redrawn may have gone with the old element: send the log again, once
  // per count the server reports, so a burst's last presses still run (the server skips numbers it has run).
  if (row.seq > data.applied && row.resentAt !== data.applied) {
    row.resentAt = data.applied;
    setStateValue("log", { epoch: row.epoch, seq: row.seq, presses: row.log });
  }
  row.show();
  return () => { if (row.show === show) row.show = () => {}; };  // a newer mount's display stays
}
