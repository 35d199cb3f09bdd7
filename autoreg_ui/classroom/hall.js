// A following student's view of the teacher's text, drawn from the class's feed (server-sent events): the token
// strip, the teacher's settings and the last step's bars follow the teacher without a rerun of the page. The two
// parts of the view on a page (strip, step) share one connection per feed address, kept across the page's
// reruns. When the feed says that what the rest of the page is drawn from changed (a question, a round, the
// stop, the end of the class, a removal), the strip part asks for one rerun per version ("news"). A stream the
// browser gives up on (an answer other than the stream: a removed seat, an ended class, a server away), or one
// silent for longer than its pings allow, is dropped and the page asked to run again, after a growing wait.
const CLOSE_AFTER_MS = 10000;  // a connection no part of the page has used for this long is closed
const SILENT_MS = 40000;  // the server pings every 15 s: silence this long means the connection is dead
const RETRY_MS = [1000, 2000, 5000, 10000, 30000];  // waits before asking again after a stream was lost

function hall() {
  if (!window.__autoregHall) window.__autoregHall = { feeds: {}, plotly: null };
  return window.__autoregHall;
}

function connect(url) {
  const all = hall();
  let feed = all.feeds[url];
  if (feed && !feed.lost) {
    clearTimeout(feed.closing);
    return feed;
  }
  const failures = feed ? feed.failures : 0;
  const kept = feed ? feed.doc : null;  // the last text received stays on screen while a new stream opens
  const views = feed ? feed.views : new Set();  // the parts drawn from the lost stream follow the new one
  feed = all.feeds[url] = { doc: kept, end: null, lost: false, failures, views, source: null,
                            closing: null, received: 0, heard: Date.now(), watchdog: null };
  const source = feed.source = new EventSource(url);
  const lose = () => {  // the browser gave up, or the stream went silent: drop it; the page runs again later
    if (feed.lost || feed.end) return;
    source.close();
    clearInterval(feed.watchdog);
    feed.lost = true;
    feed.failures += 1;
    feed.views.forEach(view => view());
  };
  source.addEventListener("class", (event) => {
    let doc;
    try { doc = JSON.parse(event.data); } catch (e) { return; }
    feed.received += 1;
    feed.heard = Date.now();
    feed.failures = 0;
    if (doc.ended || doc.removed) {
      feed.end = doc;
      source.close();
      clearInterval(feed.watchdog);
    } else if (!feed.doc || doc.version >= feed.doc.version) {
      feed.doc = doc;
    }
    feed.views.forEach(view => view());
  });
  source.addEventListener("ping", () => { feed.heard = Date.now(); });
  source.onopen = () => { feed.heard = Date.now(); feed.views.forEach(view => view()); };
  source.onerror = () => {
    if (source.readyState === EventSource.CLOSED) lose();  // it will not try again by itself
    else feed.views.forEach(view => view());  // it is reconnecting: say so
  };
  feed.watchdog = setInterval(() => { if (Date.now() - feed.heard > SILENT_MS) lose(); }, 5000);
  return feed;
}

function release(url, feed, view) {
  if (!feed) return;
  feed.views.delete(view);
  if (feed.views.size) return;
  feed.closing = setTimeout(() => {
    if (feed.views.size) return;
    feed.source.close();
    clearInterval(feed.watchdog);
    if (hall().feeds[url] === feed) delete hall().feeds[url];
  }, CLOSE_AFTER_MS);
}

function plotly(src) {
  const all = hall();
  if (window.Plotly) return Promise.resolve(window.Plotly);
  if (!all.plotly) {
    all.plotly = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = src;
      script.async = true;
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => { all.plotly = null; reject(new Error("plotly.js did not load")); };
      document.head.appendChild(script);
    });
  }
  return all.plotly;
}

// The figure in the page's colours and, in presenter mode, its sizes (what the page's own charts get).
function themed(figure, host, data) {
  const layout = JSON.parse(JSON.stringify(figure.layout || {}));
  const ink = getComputedStyle(host).color;
  const faint = ink.replace(/^rgb\(([^)]*)\)$/, "rgba($1, 0.2)");
  layout.paper_bgcolor = "rgba(0,0,0,0)";
  layout.plot_bgcolor = "rgba(0,0,0,0)";
  layout.font = Object.assign({}, layout.font, { color: ink, family: getComputedStyle(host).fontFamily });
  for (const name of ["xaxis", "yaxis"]) {
    layout[name] = Object.assign({ gridcolor: faint, zerolinecolor: faint, linecolor: faint }, layout[name],
                                 { automargin: true });  // room for the tick labels, as the page's charts get
  }
  const sizes = data.sizes;
  if (sizes) {
    layout.font.size = sizes.font;
    layout.legend = Object.assign({}, layout.legend, { font: Object.assign({}, (layout.legend || {}).font, { size: sizes.legend }) });
    for (const name of ["xaxis", "yaxis"]) {
      const axis = layout[name];
      axis.tickfont = Object.assign({}, axis.tickfont, { size: sizes.ticks });
      if (axis.title) axis.title = Object.assign({}, axis.title, { font: Object.assign({}, (axis.title || {}).font, { size: sizes.axis_title }) });
    }
    if (layout.height) layout.height = Math.round(layout.height * data.growth);
  }
  layout.autosize = true;
  delete layout.width;
  return layout;
}

function drawStrip(root, doc, feed, data) {
  let status = root.querySelector(".hall-status");
  if (!status) {
    root.innerHTML = '<p class="hall-status" role="status" aria-live="polite"></p><div class="hall-strip"></div>'
      + '<p class="hall-caption hall-settings"></p>';
    status = root.querySelector(".hall-status");
  }
  const away = feed.lost
    || (feed.source.readyState === EventSource.CONNECTING && (feed.received > 0 || feed.failures > 0));
  status.textContent = !away ? "" : (doc.text ? data.texts.reconnecting : data.texts.connecting);
  const text = doc.text;
  const strip = root.querySelector(".hall-strip");
  const html = text ? text.strip : "";
  if (strip.dataset.version !== String(doc.version)) {
    strip.innerHTML = html;  // token_strip_html's markup: every token and typed text escaped on the server
    strip.dataset.version = String(doc.version);
  }
  root.querySelector(".hall-settings").textContent = text ? text.settings : "";
}

// A probability as the app writes it (autoreg_ui/format.py percent): never 0.0% for a chance, never 100%.
function percent(p) {
  if (p <= 0) return "0%";
  if (p >= 0.9995) return "> 99.9%";
  if (p >= 0.001) return (100 * p).toFixed(1) + "%";
  if (p * 100 >= 0.001) return (100 * p).toPrecision(2) + "%";
  return "< 0.001%";
}

// The bars as text, for a screen reader (the chart itself is a picture): one line per token, each trace's value.
function barsText(figure) {
  const traces = (figure.data || []).filter(t => Array.isArray(t.x) && Array.isArray(t.y));
  if (!traces.length) return [];
  return traces[0].x.map((token, i) => String(token) + ": " + traces.map(
    t => (t.name ? t.name + " " : "") + (typeof t.y[i] === "number" ? percent(t.y[i]) : "")
  ).join(", "));
}

function drawStep(root, doc, data) {
  const step = doc.text && doc.text.step;
  if (!root.querySelector(".hall-chart")) {
    root.innerHTML = '<p class="hall-caption"></p><div class="hall-chart" aria-hidden="true"></div>'
      + '<ul class="hall-bars"></ul>';
  }
  const caption = root.querySelector(".hall-caption");
  const chart = root.querySelector(".hall-chart");
  caption.textContent = step ? step.caption : "";
  chart.style.display = step ? "" : "none";
  if (!step || chart.dataset.version === String(doc.version)) return;
  chart.dataset.version = String(doc.version);
  const bars = root.querySelector(".hall-bars");
  bars.replaceChildren(...barsText(step.figure).map(line => {
    const item = document.createElement("li");
    item.textContent = line;  // tokens are text here, never markup
    return item;
  }));
  plotly(data.plotly).then((Plotly) => {
    if (chart.dataset.version !== String(doc.version)) return;  // a newer step is on its way
    Plotly.react(chart, step.figure.data, themed(step.figure, root, data),
                 { displayModeBar: false, responsive: true });
  }).catch(() => {});
}

export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const root = parentElement.querySelector(".autoreg-hall");
  if (!root) return;
  connect(data.url);
  const current = () => hall().feeds[data.url];  // a lost stream is replaced: always read the newest
  const drawnFrom = JSON.stringify(data.doc.page);
  let asked = null;  // the version this mount asked a rerun for
  let waiting = null;  // a new stream after a lost one, once its wait is over
  const view = () => {
    const feed = current();
    if (!feed) return;
    const doc = feed.doc && feed.doc.version > data.doc.version ? feed.doc : data.doc;
    if (data.part === "strip") drawStrip(root, doc, feed, data); else drawStep(root, doc, data);
    if (data.part !== "strip") return;  // one part asks for the page's reruns
    if (feed.end) {
      if (asked !== "end") { asked = "end"; setTriggerValue("news", "end"); }
    } else if (feed.lost) {
      if (waiting === null) {
        const wait = RETRY_MS[Math.min(feed.failures, RETRY_MS.length) - 1] || RETRY_MS[0];
        waiting = setTimeout(() => {  // open the stream again, and let the page say what changed meanwhile
          waiting = null;
          connect(data.url);  // the views move to the new stream with it
          setTriggerValue("news", "lost-" + Date.now());
          view();
        }, wait);
      }
    } else if (JSON.stringify(doc.page) !== drawnFrom && asked !== doc.version) {
      asked = doc.version;
      setTriggerValue("news", doc.version);
    }
  };
  current().views.add(view);
  view();
  return () => { clearTimeout(waiting); release(data.url, current(), view); };
}
