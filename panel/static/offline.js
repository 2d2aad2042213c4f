// Rounds entered while the panel cannot be reached wait here (localStorage) and are sent when
// it can be again.  Each keeps its Idempotency-Key, so a round whose answer was lost is not
// stored twice when it is sent again.
import { newKey, Refused, send } from "./core.js";

const KEY = "panelQueue";
const listeners = [];
export const onQueueChange = (fn) => listeners.push(fn);
const changed = () => { for (const fn of listeners) fn(); };

export function queue() {
  try { return JSON.parse(localStorage.getItem(KEY) || "[]"); } catch (error) { return []; }
}
function save(entries) { localStorage.setItem(KEY, JSON.stringify(entries)); changed(); }

// Send a change, or keep it for later when the network fails: {answer} or {queued: entry}.
// The server's refusal (Refused) is thrown: that is no reason to try again.
export async function sendOrQueue(method, path, body, about) {
  const entry = { key: newKey(), method, path, body, at: Date.now(), ...about };
  if (navigator.onLine !== false) {
    try {
      return { answer: await send(method, path, body, entry.key) };
    } catch (error) {
      if (error instanceof Refused && error.status < 500) throw error;
    }
  }
  save([...queue(), entry]);
  return { queued: entry };
}

let flushing = false;
// Send what waits, oldest first; stops at the first network failure.  A refused entry stays,
// marked with the reason, until someone discards it.
export async function flush() {
  if (flushing || !queue().length) return 0;
  flushing = true;
  let sent = 0;
  try {
    for (const entry of queue()) {
      if (entry.error) continue;
      try {
        await send(entry.method, entry.path, entry.body, entry.key);
        save(queue().filter((e) => e.key !== entry.key));
        sent += 1;
      } catch (error) {
        if (!(error instanceof Refused) || error.status >= 500) break;
        save(queue().map((e) => (e.key === entry.key ? { ...e, error: error.detail } : e)));
      }
    }
  } finally {
    flushing = false;
  }
  return sent;
}
export function discard(key) { save(queue().filter((e) => e.key !== key)); }

window.addEventListener("online", () => { flush(); });
setInterval(() => { if (queue().some((e) => !e.error)) flush(); }, 10000);
