/**
 * DASHBOARD_TOKEN for Bull Board. Scripts send `Authorization: Bearer <token>`; a browser opens
 * `/queues?token=<token>` once, which sets a cookie and redirects to the same URL without the token,
 * so it stays out of the history. The board's own API calls then carry the cookie (SameSite=Strict:
 * another site cannot make a signed-in browser send them).
 */
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { TLSSocket } from 'node:tls';

export const TOKEN_COOKIE = 'gateway_ingest_dashboard';
export const TOKEN_PARAM = 'token';

export type GateDecision =
  | { kind: 'allow' }
  /** A valid `?token=`: set the cookie, then load `location`. */
  | { kind: 'sign-in'; location: string; cookie: string }
  | { kind: 'deny' };

const sha256 = (text: string): Buffer => createHash('sha256').update(text).digest();

/** Equal-length digests, so neither the comparison time nor a length check tells anything. */
function sameSecret(given: string, expected: string): boolean {
  return timingSafeEqual(sha256(given), sha256(expected));
}

/** The cookie holds a value derived from the token, not the token: reading it does not reveal it. */
export function cookieValue(token: string): string {
  return createHmac('sha256', token).update('gateway-ingest dashboard cookie v1').digest('base64url');
}

function cookieOf(req: IncomingMessage, name: string): string | null {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return null;
}

function bearerOf(req: IncomingMessage): string | null {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(req.headers.authorization ?? '');
  return m?.[1] ?? null;
}

function secure(req: IncomingMessage): boolean {
  return req.socket instanceof TLSSocket || req.headers['x-forwarded-proto'] === 'https';
}

function signIn(req: IncomingMessage, url: URL, token: string, basePath: string): GateDecision {
  const rest = new URLSearchParams(url.searchParams);
  rest.delete(TOKEN_PARAM);
  const query = rest.toString();
  const attributes = [`Path=${basePath}`, 'HttpOnly', 'SameSite=Strict', ...(secure(req) ? ['Secure'] : [])];
  return {
    kind: 'sign-in',
    location: `${url.pathname}${query ? `?${query}` : ''}`,
    cookie: `${TOKEN_COOKIE}=${cookieValue(token)}; ${attributes.join('; ')}`,
  };
}

/** Decides one request to `basePath` (and below) against the token. */
export function checkToken(req: IncomingMessage, url: URL, token: string, basePath: string): GateDecision {
  const bearer = bearerOf(req);
  if (bearer !== null) return sameSecret(bearer, token) ? { kind: 'allow' } : { kind: 'deny' };
  const param = url.searchParams.get(TOKEN_PARAM);
  if (param !== null) return sameSecret(param, token) ? signIn(req, url, token, basePath) : { kind: 'deny' };
  const cookie = cookieOf(req, TOKEN_COOKIE);
  return cookie !== null && sameSecret(cookie, cookieValue(token)) ? { kind: 'allow' } : { kind: 'deny' };
}
