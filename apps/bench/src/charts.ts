/** Small, dependency-free SVG charts for a self-contained report page. */
const COLORS = ['#2563eb', '#dc2626', '#16a34a', '#9333ea', '#ea580c'];
const WIDTH = 640;
const HEIGHT = 260;
const MARGIN = { top: 30, right: 20, bottom: 40, left: 56 };

function escape(text: string): string {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);
}

function frame(title: string, body: string, legend: string[]): string {
  const keys = legend
    .map((name, i) => `<rect x="${MARGIN.left + i * 150}" y="8" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/><text x="${MARGIN.left + 14 + i * 150}" y="17" font-size="11">${escape(name)}</text>`)
    .join('');
  return `<figure><figcaption>${escape(title)}</figcaption><svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${HEIGHT}" font-family="sans-serif">${keys}${body}</svg></figure>`;
}

/**
 * Latency distributions: share of requests per log2 latency bucket, one bar series each,
 * so that a long tail stays visible next to a tight median.
 */
export function latencyDistribution(title: string, series: Array<{ name: string; samples: number[] }>): string {
  const populated = series.filter((s) => s.samples.length > 0);
  if (populated.length === 0) return '';
  const all = populated.flatMap((s) => s.samples);
  const low = Math.floor(Math.log2(Math.max(0.01, Math.min(...all))));
  const high = Math.ceil(Math.log2(Math.max(...all, 0.02)));
  const buckets = Math.max(1, high - low);
  const shares = populated.map((s) => {
    const counts = new Array<number>(buckets).fill(0);
    for (const v of s.samples) counts[Math.min(buckets - 1, Math.max(0, Math.floor(Math.log2(Math.max(v, 0.01)) - low)))]! += 1;
    return counts.map((c) => c / s.samples.length);
  });
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const maxShare = Math.max(...shares.flat(), 0.01);
  const slot = plotW / buckets;
  const barW = (slot * 0.8) / populated.length;
  let body = '';
  shares.forEach((counts, si) => {
    counts.forEach((share, b) => {
      const h = (share / maxShare) * plotH;
      body += `<rect x="${MARGIN.left + b * slot + si * barW}" y="${MARGIN.top + plotH - h}" width="${barW}" height="${h}" fill="${COLORS[si % COLORS.length]}"><title>${(share * 100).toFixed(1)}%</title></rect>`;
    });
  });
  for (let b = 0; b <= buckets; b += Math.max(1, Math.ceil(buckets / 10))) {
    const ms = 2 ** (low + b);
    body += `<text x="${MARGIN.left + b * slot}" y="${HEIGHT - 22}" font-size="10" text-anchor="middle">${ms < 1 ? ms.toFixed(2) : ms.toFixed(0)}</text>`;
  }
  body += `<text x="${WIDTH / 2}" y="${HEIGHT - 6}" font-size="11" text-anchor="middle">latency, ms (log scale)</text>`;
  body += `<text x="12" y="${MARGIN.top + plotH / 2}" font-size="11" transform="rotate(-90 12 ${MARGIN.top + plotH / 2})" text-anchor="middle">share of requests</text>`;
  body += `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${WIDTH - MARGIN.right}" y2="${MARGIN.top + plotH}" stroke="#444"/>`;
  return frame(title, body, populated.map((s) => s.name));
}

/** Throughput over time: one line per series, a point per second. */
export function throughputOverTime(title: string, series: Array<{ name: string; perSecond: number[] }>): string {
  const populated = series.filter((s) => s.perSecond.length > 0);
  if (populated.length === 0) return '';
  const plotW = WIDTH - MARGIN.left - MARGIN.right;
  const plotH = HEIGHT - MARGIN.top - MARGIN.bottom;
  const seconds = Math.max(...populated.map((s) => s.perSecond.length));
  const top = Math.max(...populated.flatMap((s) => s.perSecond), 1);
  const x = (i: number) => MARGIN.left + (i / Math.max(1, seconds - 1)) * plotW;
  const y = (v: number) => MARGIN.top + plotH - (v / top) * plotH;
  let body = '';
  populated.forEach((s, si) => {
    const points = s.perSecond.map((v, i) => `${x(i).toFixed(1)},${y(v).toFixed(1)}`).join(' ');
    body += `<polyline fill="none" stroke="${COLORS[si % COLORS.length]}" stroke-width="2" points="${points}"/>`;
  });
  for (let t = 0; t <= 4; t++) {
    const v = (top * t) / 4;
    body += `<text x="${MARGIN.left - 6}" y="${y(v) + 4}" font-size="10" text-anchor="end">${Math.round(v)}</text>`;
  }
  const step = Math.max(1, Math.round(seconds / 8));
  for (let i = 0; i < seconds; i += step) body += `<text x="${x(i)}" y="${HEIGHT - 22}" font-size="10" text-anchor="middle">${i}</text>`;
  body += `<text x="${WIDTH / 2}" y="${HEIGHT - 6}" font-size="11" text-anchor="middle">seconds</text>`;
  body += `<text x="12" y="${MARGIN.top + plotH / 2}" font-size="11" transform="rotate(-90 12 ${MARGIN.top + plotH / 2})" text-anchor="middle">per second</text>`;
  body += `<line x1="${MARGIN.left}" y1="${MARGIN.top + plotH}" x2="${WIDTH - MARGIN.right}" y2="${MARGIN.top + plotH}" stroke="#444"/>`;
  return frame(title, body, populated.map((s) => s.name));
}
