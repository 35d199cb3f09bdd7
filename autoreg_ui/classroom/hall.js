// A following student's view of the teacher's text, drawn from the class's feed (server-sent events): the token
// strip, the teacher's settings and the last step's bars follow the teacher without a rerun of the page. The two
// parts of the view on a page (strip, step) share one connection per feed address, kept across the page's
// reruns. When the feed says that what the rest of the page is drawn from changed (a question, a round, the
// stop, the end of the class, a removal), one rerun is asked for per version ("news").
const CLOSE_AFTER_MS = 10000;  // a connection no part of the page has used for this long is closed

function hall() {
  if (!window.__autoregHall) window.__autoregHall = { feeds: {}, plotly: null };
  return window.__autoregHall;
}

function connect(url) {
  const all = hall();
  let feed = all.feeds[url];
  if (feed) {
    clearTimeout(feed.closing);
    return feed;
  }
  feed = all.feeds[url] = { doc: null, end: null, live: false, views: new Set(), source: null, closing: null,
                            received: 0 };
  const source = feed.source = new EventSource(url);
  source.addEventListener("class", (event) => {
    let doc;
    try { doc = JSON.parse(event.data); } catch (e) { return; }
    feed.received += 1;
    if (doc.ended || doc.removed) {
      feed.end = doc;
      source.close();
    } else if (!feed.doc || doc.version >= feed.doc.version) {
      feed.doc = doc;
    }
    feed.live = true;
    feed.views.forEach(view => view());
  });
  source.onopen = () => { feed.live = true; feed.views.forEach(view => view()); };
  source.onerror = () => { feed.live = source.readyState === EventSource.OPEN; feed.views.forEach(view => view()); };
  return feed;
}

function release(url, feed, view) {
  feed.views.delete(view);
  if (feed.views.size) return;
  feed.closing = setTimeout(() => {
    if (feed.views.size) return;
    feed.source.close();
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
  if (layout.template && layout.template.layout) {  // the template's own colours give way to the page's
    const base = layout.template.layout;
    for (const name of ["paper_bgcolor", "plot_bgcolor", "font"]) delete base[name];
    for (const name of ["xaxis", "yaxis"]) {
      if (base[name]) for (const key of ["gridcolor", "zerolinecolor", "linecolor"]) delete base[name][key];
    }
  }
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
  const reconnecting = feed.source.readyState === EventSource.CONNECTING && feed.doc !== null;
  status.textContent = reconnecting ? data.texts.reconnecting : "";
  const text = doc.text;
  const strip = root.querySelector(".hall-strip");
  const html = text ? text.strip : "";
  if (strip.dataset.version !== String(doc.version)) {
    strip.innerHTML = html;  // token_strip_html's markup: every token and typed text escaped on the server
    strip.dataset.version = String(doc.version);
  }
  root.querySelector(".hall-settings").textContent = text ? text.settings : "";
}

function drawStep(root, doc, data) {
  const step = doc.text && doc.text.step;
  if (!root.querySelector(".hall-chart")) {
    root.innerHTML = '<p class="hall-caption"></p><div class="hall-chart" role="img"></div>';
  }
  const caption = root.querySelector(".hall-caption");
  const chart = root.querySelector(".hall-chart");
  caption.textContent = step ? step.caption : "";
  chart.setAttribute("aria-label", step ? step.caption : "");
  chart.style.display = step ? "" : "none";
  if (!step || chart.dataset.version === String(doc.version)) return;
  chart.dataset.version = String(doc.version);
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
  const feed = connect(data.url);
  const drawnFrom = JSON.stringify(data.doc.page);
  let asked = null;  // the version this mount asked a rerun for
  const view = () => {
    if (feed.end) {
      if (asked !== "end") { asked = "end"; setTriggerValue("news", "end"); }
      return;
    }
    const doc = feed.doc && feed.doc.version > data.doc.version ? feed.doc : data.doc;
    if (data.part === "strip") drawStrip(root, doc, feed, data); else drawStep(root, doc, data);
    if (JSON.stringify(doc.page) !== drawnFrom && asked !== doc.version && data.part === "strip") {
      asked = doc.version;
      setTriggerValue("news", doc.version);
    }
  };
  feed.views.add(view);
  view();
  return () => release(data.url, feed, view);
}
