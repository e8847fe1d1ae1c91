/** Typed arrays that grow by doubling (the range source's per-series columns). */

/** `a`'s elements in an array of the same kind twice its length. */
export function doubled<A extends Float64Array | Int32Array>(a: A): A {
  const b = new (a.constructor as new (length: number) => A)(a.length * 2);
  b.set(a);
  return b;
}
