// The live scoreboard's patches (panel/patch.py): JSON Patch (RFC 6902), add / remove /
// replace, applied in order.  The state given is left as it was: the parts on a patched path
// are copied, the rest is shared with it, so a view may keep the state it drew last.

export class PatchError extends Error {}

const tokens = (path) => {
  if (typeof path !== "string" || (path && !path.startsWith("/"))) throw new PatchError(`not a JSON pointer: ${path}`);
  return path.split("/").slice(1).map((token) => token.replace(/~1/g, "/").replace(/~0/g, "~"));
};

function keyIn(container, token, ending) {
  if (Array.isArray(container)) {
    if (ending && token === "-") return container.length;
    if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new PatchError(`not an array index: ${token}`);
    const index = Number(token);
    if (index > container.length || (index === container.length && !ending)) throw new PatchError(`index ${index} is past the array's end`);
    return index;
  }
  if (container !== null && typeof container === "object") return token;
  throw new PatchError(`${token} names a part of a value that has none`);
}

// A member set as data even where its name is "__proto__" (a player's name may be anything).
const put = (object, key, value) => Object.defineProperty(object, key, { value, writable: true, enumerable: true, configurable: true });
const has = (object, key) => Object.prototype.hasOwnProperty.call(object, key);

function valueOf(op) {
  if (!("value" in op)) throw new PatchError(`${op.op} at ${op.path} has no value`);
  return op.value;
}

export function applyPatch(document, ops) {
  const copies = new Set();  // containers made here, which may be changed in place
  const own = (value) => {
    if (value === null || typeof value !== "object" || copies.has(value)) return value;
    const copy = Array.isArray(value) ? value.slice() : { ...value };
    copies.add(copy);
    return copy;
  };
  let root = document;
  for (const op of ops) {
    if (!["add", "remove", "replace"].includes(op.op)) throw new PatchError(`unknown operation ${op.op}`);
    const path = tokens(op.path);
    if (!path.length) {
      if (op.op === "remove") throw new PatchError("the whole document cannot be removed");
      root = valueOf(op);
      continue;
    }
    root = own(root);
    let parent = root;
    for (const token of path.slice(0, -1)) {
      const key = keyIn(parent, token, false);
      if (Array.isArray(parent)) parent = parent[key] = own(parent[key]);
      else if (has(parent, key)) parent = put(parent, key, own(parent[key]))[key];
      else throw new PatchError(`no member ${key}`);
    }
    const key = keyIn(parent, path[path.length - 1], op.op === "add");
    if (op.op === "add") {
      if (Array.isArray(parent)) parent.splice(key, 0, valueOf(op));
      else put(parent, key, valueOf(op));
      continue;
    }
    if (!Array.isArray(parent) && !has(parent, key)) throw new PatchError(`no member ${key} to ${op.op}`);
    if (op.op === "remove") {
      if (Array.isArray(parent)) parent.splice(key, 1);
      else delete parent[key];
    } else if (Array.isArray(parent)) {
      parent[key] = valueOf(op);
    } else {
      put(parent, key, valueOf(op));
    }
  }
  return root;
}
