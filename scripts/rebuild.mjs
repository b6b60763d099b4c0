// Rebuilds a projection of a running feedmill from the log, showing progress, after a change
// to its config (a timeline group's model or cap). Reads keep using the live projection until
// the new one has caught up.
// Usage: npm run rebuild -- --projection timeline [--url http://127.0.0.1:3000]
import cliProgress from 'cli-progress';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    projection: { type: 'string' },
    url: { type: 'string', default: `http://127.0.0.1:${process.env.PORT ?? 3000}` },
  },
});
if (!values.projection) {
  console.error('say which projection to rebuild: --projection timeline');
  process.exit(2);
}
const endpoint = `${values.url}/v1/admin/rebuild/${encodeURIComponent(values.projection)}`;

async function call(method) {
  const response = await fetch(endpoint, { method });
  const body = await response.json();
  if (!response.ok) throw new Error(`${method} ${endpoint}: ${response.status} ${body.code}: ${body.message}`);
  return body;
}

try {
  let status = await call('POST');
  const bar = new cliProgress.SingleBar(
    { format: `rebuilding ${values.projection} [{bar}] {percentage}% | {value}/{total} log position`, noTTYOutput: true, notTTYSchedule: 2000 },
    cliProgress.Presets.shades_classic,
  );
  bar.start(Math.max(1, status.head), 0);
  while (status.state === 'running') {
    await new Promise((resolve) => setTimeout(resolve, 200));
    status = await call('GET');
    bar.update(Math.min(status.position, Math.max(1, status.head)));
  }
  bar.update(Math.max(1, status.head));
  bar.stop();
  if (status.state !== 'done') throw new Error(`rebuild ${status.state}: ${status.error ?? 'no detail'}`);
  console.log(`rebuilt ${values.projection}: ${status.events} events replayed; reads now use the new projection`);
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
