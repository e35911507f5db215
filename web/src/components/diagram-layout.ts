/**
 * Where the boxes and arrows of an entity diagram go: entities on a circle (a row for two or
 * fewer), each relation a curved arrow from border to border, the two directions of a pair bent
 * to opposite sides, a relation of an entity to itself a loop. Pure.
 */

export interface NodeBox {
  name: string;
  x: number;
  y: number;
  w: number;
  h: number;
}

export interface Edge {
  from: string;
  to: string;
  label: string;
  many: boolean;
}

export interface EdgePath {
  edge: Edge;
  d: string;
  lx: number;
  ly: number;
}

export const BOX_W = 150;
export const BOX_H = 44;

export function layoutNodes(names: string[]): { nodes: NodeBox[]; width: number; height: number } {
  const n = names.length;
  if (n <= 2) {
    const nodes = names.map((name, i) => ({ name, x: 40 + i * (BOX_W + 180), y: 60, w: BOX_W, h: BOX_H }));
    return { nodes, width: Math.max(BOX_W + 80, n * (BOX_W + 180) - 100), height: BOX_H + 120 };
  }
  const r = Math.max(130, (n * (BOX_W + 40)) / (2 * Math.PI));
  const cx = r + BOX_W / 2 + 30;
  const cy = r * 0.62 + BOX_H / 2 + 40;
  const nodes = names.map((name, i) => {
    const a = -Math.PI / 2 + (2 * Math.PI * i) / n;
    return {
      name,
      x: cx + r * Math.cos(a) - BOX_W / 2,
      y: cy + r * 0.62 * Math.sin(a) - BOX_H / 2,
      w: BOX_W,
      h: BOX_H,
    };
  });
  return { nodes, width: 2 * cx, height: 2 * cy };
}

/** The point where the segment from the box's centre towards (tx, ty) leaves the box. */
function border(b: NodeBox, tx: number, ty: number): [number, number] {
  const cx = b.x + b.w / 2;
  const cy = b.y + b.h / 2;
  const dx = tx - cx;
  const dy = ty - cy;
  if (dx === 0 && dy === 0) return [cx, cy];
  const s = Math.min(Math.abs(b.w / 2 / (dx || 1e-9)), Math.abs(b.h / 2 / (dy || 1e-9)));
  return [cx + dx * s, cy + dy * s];
}

const round = (v: number) => Math.round(v * 10) / 10;

export function edgePaths(nodes: NodeBox[], edges: Edge[]): EdgePath[] {
  const byName = new Map(nodes.map((n) => [n.name, n]));
  const out: EdgePath[] = [];
  for (const edge of edges) {
    const a = byName.get(edge.from);
    const b = byName.get(edge.to);
    if (!a || !b) continue;
    if (a === b) {
      const x = a.x + a.w;
      const y = a.y + a.h / 2;
      out.push({ edge, d: `M${x},${y - 8} C${x + 50},${y - 40} ${x + 50},${y + 40} ${x},${y + 8}`, lx: x + 44, ly: y });
      continue;
    }
    const [ax, ay] = [a.x + a.w / 2, a.y + a.h / 2];
    const [bx, by] = [b.x + b.w / 2, b.y + b.h / 2];
    // Bend to the right of the direction of travel, so A->B and B->A part.
    const len = Math.hypot(bx - ax, by - ay) || 1;
    const [nx, ny] = [-(by - ay) / len, (bx - ax) / len];
    const bend = 26;
    const [qx, qy] = [(ax + bx) / 2 + nx * bend, (ay + by) / 2 + ny * bend];
    const [sx, sy] = border(a, qx, qy);
    const [ex, ey] = border(b, qx, qy);
    out.push({
      edge,
      d: `M${round(sx)},${round(sy)} Q${round(qx)},${round(qy)} ${round(ex)},${round(ey)}`,
      lx: round((sx + 2 * qx + ex) / 4),
      ly: round((sy + 2 * qy + ey) / 4),
    });
  }
  return out;
}
