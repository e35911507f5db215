/** A vendor HTTP client that records every request it sends (before sending it). */
import type { HttpClient, HttpRequest } from '../../runtime/index.js';

export function recording(inner: HttpClient): HttpClient & { sent: HttpRequest[] } {
  const sent: HttpRequest[] = [];
  return {
    sent,
    request(req, opts) {
      sent.push({ ...req, headers: { ...req.headers } });
      return inner.request(req, opts);
    },
    close: () => inner.close(),
  };
}
