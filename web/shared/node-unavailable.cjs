// The pages import the API's zod schemas, whose modules also hold server-side checks that use `node:crypto`
// (never run by a page: pages parse answers, not requests). In the browser that import resolves here: any function
// of it throws if a page ever called it, so nothing of the server is bundled and nothing fails silently.
const unavailable = () => {
  throw new Error('node:crypto is not available in the browser');
};
module.exports = new Proxy({}, { get: (_target, name) => (name === '__esModule' ? false : unavailable) });
