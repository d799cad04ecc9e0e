/**
 * The soak benchmark's chart (bench/soak.ts): one small line chart per measure against the commit
 * count, drawn as SVG by hand (no chart library: axes, ticks and polylines are all it needs) and
 * rasterized to PNG with @resvg/resvg-js (a dev dependency, loaded by dynamic import: without it only
 * the SVG is written). Text uses the machine's fonts (DejaVu Sans on Debian).
 */
import { writeFile } from 'node:fs/promises';

export interface Series {
  name: string;
  color: string;
  points: readonly (readonly [number, number])[];
}

export interface Panel {
  title: string;
  unit: string;
  series: readonly Series[];
}

const W = 460;
const H = 250;
const PAD = { left: 64, right: 14, top: 30, bottom: 52 };

function niceStep(span: number, ticks: number): number {
  const raw = span / ticks;
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

function fmt(v: number): string {
  if (Math.abs(v) >= 1e6) return `${+(v / 1e6).toFixed(1)}M`;
  if (Math.abs(v) >= 1e4) return `${+(v / 1e3).toFixed(1)}k`;
  return String(+v.toFixed(2));
}

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function panelSvg(p: Panel, x0: number, y0: number): string {
  const all = p.series.flatMap((s) => s.points);
  const xs = all.map((q) => q[0]);
  const ys = all.map((q) => q[1]);
  const xMax = Math.max(1, ...xs);
  const yMax = Math.max(1e-9, ...ys) * 1.08;
  const yStep = niceStep(yMax, 4);
  const xStep = niceStep(xMax, 5);
  const pw = W - PAD.left - PAD.right;
  const ph = H - PAD.top - PAD.bottom;
  const sx = (x: number) => x0 + PAD.left + (x / xMax) * pw;
  const sy = (y: number) => y0 + PAD.top + ph - (y / (Math.ceil(yMax / yStep) * yStep)) * ph;
  const out: string[] = [];
  out.push(`<text x="${x0 + PAD.left}" y="${y0 + 18}" font-size="13" font-weight="bold">${esc(p.title)}</text>`);
  out.push(`<text x="${x0 + W - PAD.right}" y="${y0 + 18}" font-size="11" text-anchor="end" fill="#555">${esc(p.unit)}</text>`);
  for (let y = 0; y <= Math.ceil(yMax / yStep) * yStep + 1e-9; y += yStep) {
    out.push(`<line x1="${sx(0)}" x2="${sx(xMax)}" y1="${sy(y)}" y2="${sy(y)}" stroke="#e3e3e3"/>`);
    out.push(`<text x="${sx(0) - 6}" y="${sy(y) + 4}" font-size="10" text-anchor="end" fill="#333">${fmt(y)}</text>`);
  }
  for (let x = 0; x <= xMax + 1e-9; x += xStep) {
    out.push(`<line x1="${sx(x)}" x2="${sx(x)}" y1="${sy(0)}" y2="${sy(0) + 4}" stroke="#333"/>`);
    out.push(`<text x="${sx(x)}" y="${sy(0) + 16}" font-size="10" text-anchor="middle" fill="#333">${fmt(x)}</text>`);
  }
  out.push(`<line x1="${sx(0)}" x2="${sx(xMax)}" y1="${sy(0)}" y2="${sy(0)}" stroke="#333"/>`);
  out.push(`<text x="${x0 + PAD.left + pw / 2}" y="${y0 + H - 20}" font-size="10" text-anchor="middle" fill="#333">commits</text>`);
  let lx = x0 + PAD.left;
  for (const s of p.series) {
    if (s.points.length > 0) {
      const pts = s.points.map(([x, y]) => `${sx(x).toFixed(1)},${sy(y).toFixed(1)}`).join(' ');
      out.push(`<polyline fill="none" stroke="${s.color}" stroke-width="1.8" points="${pts}"/>`);
      for (const [x, y] of s.points) out.push(`<circle cx="${sx(x).toFixed(1)}" cy="${sy(y).toFixed(1)}" r="2" fill="${s.color}"/>`);
    }
    out.push(`<rect x="${lx}" y="${y0 + H - 11}" width="10" height="3" fill="${s.color}"/>`);
    out.push(`<text x="${lx + 14}" y="${y0 + H - 6}" font-size="10" fill="#333">${esc(s.name)}</text>`);
    lx += 22 + s.name.length * 6;
  }
  return out.join('\n');
}

export function chartSvg(title: string, subtitles: readonly string[], panels: readonly Panel[], columns = 2): string {
  const rows = Math.ceil(panels.length / columns);
  const width = W * columns;
  const top = 36 + 15 * subtitles.length;
  const height = top + H * rows;
  const body = panels.map((p, i) => panelSvg(p, (i % columns) * W, top + Math.floor(i / columns) * H)).join('\n');
  const sub = subtitles.map((t, i) => `<text x="14" y="${44 + 15 * i}" font-size="11" fill="#444">${esc(t)}</text>`).join('\n');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" font-family="DejaVu Sans, sans-serif">
<rect width="100%" height="100%" fill="#fff"/>
<text x="14" y="24" font-size="16" font-weight="bold">${esc(title)}</text>
${sub}
${body}
</svg>
`;
}

/** Writes `<base>.svg` and, when @resvg/resvg-js is installed, `<base>.png`; returns the paths written. */
export async function writeChart(base: string, svg: string): Promise<{ svg: string; png?: string; note?: string }> {
  await writeFile(`${base}.svg`, svg);
  let resvg: typeof import('@resvg/resvg-js');
  try {
    resvg = await import('@resvg/resvg-js');
  } catch (e) {
    return { svg: `${base}.svg`, note: `bench: no PNG — @resvg/resvg-js could not be loaded (${(e as Error).message}); run npm install to get the dev dependency` };
  }
  const png = new resvg.Resvg(svg, { font: { loadSystemFonts: true, defaultFontFamily: 'DejaVu Sans' }, background: '#ffffff' }).render().asPng();
  await writeFile(`${base}.png`, png);
  return { svg: `${base}.svg`, png: `${base}.png` };
}
