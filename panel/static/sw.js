// The panel's service worker (served as /sw.js, scope /): the page's shell is kept, so the
// panel opens without a connection; what the network gives is always preferred, so a new
// version of the page is used as soon as it can be fetched.  Changes (POST, PUT) pass through:
// the page queues rounds entered offline itself (offline.js).
const CACHE = "tabletop-shell-1";
const SHELL = [
  "/", "/manifest.webmanifest", "/static/panel.css", "/static/icon.svg",
  "/static/panel.js", "/static/core.js", "/static/i18n.js", "/static/feed.js", "/static/hint.js",
  "/static/lists.js", "/static/offline.js", "/static/patch.js", "/static/round.js", "/static/tv.js",
  "/static/i18n/de.json", "/static/i18n/en.json", "/static/i18n/ro.json",
];
// API answers kept for reading offline (the last state seen, the variants, the texts).
const KEPT_API = /^\/api\/(panel|join|variants(\/[\w-]+\/rules)?|matches(\/current|\/\d+\/state)?|players)$/;

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(CACHE).then((cache) => cache.addAll(SHELL)).then(() => self.skipWaiting()));
});
self.addEventListener("activate", (event) => {
  event.waitUntil(caches.keys()
    .then((keys) => Promise.all(keys.filter((key) => key !== CACHE).map((key) => caches.delete(key))))
    .then(() => self.clients.claim()));
});

// The network's answer, kept for later (the worker stays up until it is stored); without a
// network, the answer kept last time.
async function networkFirst(event) {
  const request = event.request, cache = await caches.open(CACHE);
  try {
    const response = await fetch(request);
    if (response.ok && response.type === "basic") event.waitUntil(cache.put(request, response.clone()));
    return response;
  } catch (error) {
    const kept = await cache.match(request);
    if (kept) return kept;
    throw error;
  }
}

self.addEventListener("fetch", (event) => {
  const request = event.request, url = new URL(request.url);
  if (request.method !== "GET" || url.origin !== self.location.origin) return;
  if (request.mode === "navigate") {
    // every view is the same page: offline, any of them is the kept "/"
    event.respondWith(fetch(request).catch(() => caches.open(CACHE).then((cache) => cache.match("/"))));
  } else if (url.pathname.startsWith("/static/") || url.pathname === "/manifest.webmanifest" || KEPT_API.test(url.pathname)) {
    event.respondWith(networkFirst(event));
  }
});
