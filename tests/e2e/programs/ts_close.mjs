// Close the official TypeScript SDK client while a tool call is in flight.
//
//   node ts_close.mjs NODE_MODULES SECONDS COMMAND...
//
// Connects to the server COMMAND starts, starts a `wait` call of SECONDS,
// and after half a second closes the client with the call outstanding (the
// SDK closes the server's stdin, then signals it if it does not exit).
// Prints one JSON line, {"closed_in": seconds, "call": "..."}; an uncaught
// error ends the process non-zero.
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [nodeModules, seconds, command, ...args] = process.argv.slice(2);
const sdk = (name) => import(pathToFileURL(join(nodeModules, "@modelcontextprotocol/sdk/dist/esm", name)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");

const client = new Client({ name: "close-test", version: "0" });
await client.connect(new StdioClientTransport({ command, args, stderr: "ignore" }));
let outcome = "pending";
const call = client.callTool({ name: "wait", arguments: { seconds: Number(seconds) } }, undefined,
  { timeout: 60000 })
  .then(() => { outcome = "answered"; }, (error) => { outcome = `rejected: ${error.message}`; });
await new Promise((resolve) => setTimeout(resolve, 500));
const started = performance.now();
await client.close();
const closedIn = (performance.now() - started) / 1000;
await call;
console.log(JSON.stringify({ closed_in: closedIn, call: outcome }));
