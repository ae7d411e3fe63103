// Prints a configuration for provider.mjs: a new RSA signing key, one client and one
// resource with two scopes. The OAuth guide's hands-on (docs/guides/oauth.md) starts
// with it; the tests write their own (tests/auth/oauth_provider.py).
//
//   node demo-config.mjs RESOURCE PORT [UPSTREAM] > config.json
//
// The client is `agent` with the secret `agent-secret` (a demo: nothing to keep);
// it may ask for `notes:read` and `notes:write`. Tokens for RESOURCE are JWTs. With
// UPSTREAM (a second resource, behind a gateway), the client `gateway` (secret
// `gateway-secret`) may exchange tokens for it (RFC 8693).
import { generateKeyPairSync } from 'node:crypto';

const [resource, port, upstream] = process.argv.slice(2);
if (!resource || !port) {
  process.stderr.write('usage: node demo-config.mjs RESOURCE PORT [UPSTREAM] > config.json\n');
  process.exit(2);
}
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
const key = { ...privateKey.export({ format: 'jwk' }), kid: 'demo', alg: 'RS256', use: 'sig' };
const scope = 'notes:read notes:write';
const config = {
  port: Number(port),
  keys: { keys: [key] },
  clients: [{ client_id: 'agent', client_secret: 'agent-secret', scope }],
  resources: { [resource]: { scope, format: 'jwt' } },
};
if (upstream) {
  config.clients.push({
    client_id: 'gateway', client_secret: 'gateway-secret', scope, token_exchange: true,
  });
  config.resources[upstream] = { scope, format: 'jwt' };
}
process.stdout.write(`${JSON.stringify(config, null, 2)}\n`);
