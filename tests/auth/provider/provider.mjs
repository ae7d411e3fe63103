// A real OAuth 2.1 authorization server for trio_mcp.auth's tests: panva's
// oidc-provider (a certified OpenID provider), configured from a JSON file the test
// writes, listening on 127.0.0.1.
//
//   node provider.mjs CONFIG.json
//
// CONFIG: {"port": 0 or a port, "keys": {"keys": [private JWKs]},
//          "clients": [{"client_id", "client_secret", "scope", "token_exchange"}],
//          "resources": {"<resource URL>": {"scope": "a b", "format": "jwt"|"opaque"}}}
// The first key signs. Once listening it prints one line, `ready <issuer>`, on stdout.
//
// Enabled: client credentials grants, resource indicators (RFC 8707: a token is
// issued for one resource, its `aud`), JWT and opaque access tokens (per resource),
// introspection (RFC 7662), revocation (RFC 7009), DPoP-bound tokens (RFC 9449, on by
// default in oidc-provider) and, for clients with "token_exchange": true, token
// exchange (RFC 8693): a JWT access token this provider issued is exchanged for one
// whose audience is the resource asked for, for the same subject.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

import { createLocalJWKSet, jwtVerify } from 'jose';
import Provider, { errors } from 'oidc-provider';

const TOKEN_EXCHANGE = 'urn:ietf:params:oauth:grant-type:token-exchange';
const ACCESS_TOKEN = 'urn:ietf:params:oauth:token-type:access_token';

const config = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const server = createServer();

await new Promise((resolve, reject) => {
  server.once('error', reject);
  server.listen(config.port ?? 0, '127.0.0.1', resolve);
});
const issuer = `http://127.0.0.1:${server.address().port}`;

const provider = new Provider(issuer, {
  jwks: config.keys,
  clients: config.clients.map((c) => ({
    client_id: c.client_id,
    client_secret: c.client_secret,
    // oidc-provider refuses an empty scope: a client that asks for none has none.
    ...(c.scope ? { scope: c.scope } : {}),
    grant_types: c.token_exchange ? ['client_credentials', TOKEN_EXCHANGE] : ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  scopes: [...new Set(Object.values(config.resources).flatMap((r) => r.scope.split(' ')))],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: true },
    revocation: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: (ctx, client, oneOf) => oneOf,
      useGrantedResource: () => true,
      getResourceServerInfo: (ctx, resource) => {
        const known = config.resources[resource];
        if (!known) throw new errors.InvalidTarget();
        return {
          scope: known.scope,
          audience: resource,
          accessTokenTTL: known.ttl ?? 600,
          accessTokenFormat: known.format,
          jwt: { sign: { alg: config.keys.keys[0].alg ?? 'RS256' } },
        };
      },
    },
  },
});
// RFC 8693 §2: the subject token must be a JWT access token of this provider, for
// one of its resources; the new token is for the resource (or audience) asked for,
// with the subject's `sub`, issued to the exchanging client.
const publicKeys = createLocalJWKSet({
  keys: config.keys.keys.map(({ d, p, q, dp, dq, qi, ...pub }) => pub),
});
async function tokenExchange(ctx) {
  const { params, client } = ctx.oidc;
  if (params.subject_token_type !== ACCESS_TOKEN) {
    throw new errors.InvalidRequest('subject_token_type must be an access token');
  }
  let subject;
  try {
    ({ payload: subject } = await jwtVerify(params.subject_token, publicKeys, { issuer }));
  } catch {
    throw new errors.InvalidGrant('subject_token is not valid');
  }
  if (!config.resources[subject.aud]) throw new errors.InvalidGrant('subject_token is not for a known resource');
  const target = params.resource ?? params.audience;
  const known = config.resources[target];
  if (!known) throw new errors.InvalidTarget();
  const asked = (params.scope ?? known.scope).split(' ');
  const held = new Set((subject.scope ?? '').split(' '));
  const scope = asked.filter((s) => held.has(s) && known.scope.split(' ').includes(s)).join(' ');
  const token = new provider.AccessToken({
    accountId: subject.sub,
    client,
    gty: 'token-exchange',
    scope: scope || undefined,
  });
  token.resourceServer = new provider.ResourceServer(target, {
    scope: known.scope,
    audience: target,
    accessTokenTTL: known.ttl ?? 600,
    accessTokenFormat: 'jwt',
    jwt: { sign: { alg: config.keys.keys[0].alg ?? 'RS256' } },
  });
  const value = await token.save();
  ctx.body = {
    access_token: value,
    issued_token_type: ACCESS_TOKEN,
    token_type: 'Bearer',
    expires_in: token.expiration,
    ...(token.scope ? { scope: token.scope } : {}),
  };
}
provider.registerGrantType(TOKEN_EXCHANGE, tokenExchange, [
  'subject_token', 'subject_token_type', 'requested_token_type', 'audience', 'resource', 'scope',
], ['resource']);
// The tests reach it over plain HTTP on loopback: no proxy in front.
provider.proxy = false;
server.on('request', provider.callback());
process.on('SIGTERM', () => server.close(() => process.exit(0)));
process.stdout.write(`ready ${issuer}\n`);
