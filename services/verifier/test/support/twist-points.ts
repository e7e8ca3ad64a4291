import * as mcl from "mcl-wasm";

const fp2 = (a: number, b: number) => {
  const v = new mcl.Fp2();
  v.setInt(a, b);
  return v;
};

/**
 * Points of the twist y² = x³ + 3/(9+u) with x = a + (7a+1)u for a = from, from+1, …, not cofactor-cleared: the
 * twist's cofactor is huge, so almost none is in G2. mcl must be initialised.
 */
export function twistPoints(count: number, from = 1): mcl.G2[] {
  const twistB = mcl.div(fp2(3, 0), fp2(9, 1));
  const points: mcl.G2[] = [];
  for (let a = from; points.length < count; a++) {
    const x = fp2(a, 7 * a + 1);
    const [isSquare, y] = mcl.squareRoot(mcl.add(mcl.mul(mcl.sqr(x), x), twistB));
    if (!isSquare) continue;
    const point = new mcl.G2();
    point.setX(x);
    point.setY(y);
    point.setZ(fp2(1, 0));
    points.push(point);
  }
  return points;
}
