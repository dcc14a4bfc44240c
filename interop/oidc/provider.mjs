// A real OpenID provider (oidc-provider 9.13.3) on loopback, for sterna's resource-server
// tests (shared/spec/auth.md §6). It issues RFC 9068 JWT access tokens (RS256, typ at+jwt)
// whose `aud` is the MCP resource (RFC 8707 resource indicators), to two public clients
// using the authorization code flow with PKCE: `mcp-test-client` (bearer tokens, or
// DPoP-bound ones when it sends a proof) and `mcp-dpop-client`, whose tokens are always
// DPoP-bound (RFC 9449, `features.dPoP`: a proof at the token endpoint, `cnf.jkt` in the
// token, `token_type: DPoP`). Logins and consents are headless: the interaction handler
// logs in the account named by `login_hint` (default `test-user`) and grants every scope
// asked for.
//
//   RESOURCE=http://127.0.0.1:8080/mcp PORT=0 node provider.mjs
//   → prints {"issuer":"http://127.0.0.1:<port>"} once ready; exits when stdin closes.
import http from 'node:http';
import { generateKeyPairSync } from 'node:crypto';
import Provider, { errors } from 'oidc-provider';

const RESOURCE = process.env.RESOURCE;
const REDIRECT = process.env.REDIRECT ?? 'http://127.0.0.1:9/callback';
const CLIENT_ID = process.env.CLIENT_ID ?? 'mcp-test-client';
const DPOP_CLIENT_ID = process.env.DPOP_CLIENT_ID ?? 'mcp-dpop-client';
const SCOPES = 'mcp:read mcp:write';
if (!RESOURCE) {
  console.error('RESOURCE (the MCP resource URI) is required');
  process.exit(2);
}

let route = (_req, res) => { res.statusCode = 503; res.end(); };
const server = http.createServer((req, res) => route(req, res));
await new Promise((ok) => server.listen(Number(process.env.PORT ?? 0), '127.0.0.1', ok));
const issuer = `http://127.0.0.1:${server.address().port}`;

const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const signing = { ...privateKey.export({ format: 'jwk' }), kid: 'op-rs256', alg: 'RS256', use: 'sig' };

const provider = new Provider(issuer, {
  clients: [{
    client_id: CLIENT_ID,
    token_endpoint_auth_method: 'none',
    application_type: 'native',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  }, {
    client_id: DPOP_CLIENT_ID,
    token_endpoint_auth_method: 'none',
    application_type: 'native',
    redirect_uris: [REDIRECT],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    dpop_bound_access_tokens: true,
  }],
  jwks: { keys: [signing] },
  cookies: { keys: ['sterna-test-only'] },
  ttl: { AccessToken: 600, AuthorizationCode: 60, Grant: 3600, IdToken: 600, Interaction: 600, Session: 3600 },
  scopes: ['openid', 'offline_access'],
  findAccount: async (_ctx, id) => ({ accountId: id, claims: async () => ({ sub: id }) }),
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  features: {
    devInteractions: { enabled: false },
    dPoP: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: async () => RESOURCE,
      useGrantedResource: async () => true,
      getResourceServerInfo: async (_ctx, indicator) => {
        if (indicator !== RESOURCE) throw new errors.InvalidTarget();
        return {
          scope: SCOPES,
          audience: RESOURCE,
          accessTokenTTL: 600,
          accessTokenFormat: 'jwt',
          jwt: { sign: { alg: 'RS256' } },
        };
      },
    },
  },
});

// The headless "user": logs in as login_hint, consents to everything asked.
async function interact(req, res) {
  const { prompt, params, session, grantId } = await provider.interactionDetails(req, res);
  if (prompt.name === 'login') {
    const accountId = params.login_hint || 'test-user';
    return provider.interactionFinished(req, res, { login: { accountId } }, { mergeWithLastSubmission: false });
  }
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  const details = prompt.details;
  if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
  if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.join(' '));
  }
  return provider.interactionFinished(req, res, { consent: { grantId: await grant.save() } }, { mergeWithLastSubmission: true });
}

const callback = provider.callback();
route = (req, res) => {
  if (req.method === 'GET' && req.url.startsWith('/interaction/')) {
    interact(req, res).catch((e) => { console.error('interaction failed:', e); res.statusCode = 500; res.end(); });
  } else {
    callback(req, res);
  }
};

const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
process.stdin.on('end', stop);
process.stdin.resume();
console.log(JSON.stringify({ issuer }));
