// Lists or replays the dead letters: log events whose deliveries kept failing (for every
// reader, or for one reader named), kept in the event log with their reason until replayed.
// Usage: npm run deadletters -- list|replay [--url http://127.0.0.1:3000]
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { url: { type: 'string', default: `http://127.0.0.1:${process.env.PORT ?? 3000}` } },
});
const [command] = positionals;
if (command !== 'list' && command !== 'replay') {
  console.error('say what to do: npm run deadletters -- list|replay [--url URL]');
  process.exit(2);
}

// A letter with a reader is that reader's alone: the event reached every other reader.
const describe = (letter) =>
  `position ${letter.position}  ${letter.type}  ${letter.stream}#${letter.revision}${letter.reader ? `  for ${letter.reader}` : ''}  ${letter.time}  after ${letter.attempts} attempts: ${letter.reason}`;

async function call(method, path) {
  const response = await fetch(`${values.url}/v1/admin/${path}`, { method });
  const body = await response.json();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${body.code}: ${body.message}`);
  return body;
}

try {
  if (command === 'list') {
    const { items } = await call('GET', 'deadletters');
    console.log(items.length === 0 ? 'no dead letters' : `${items.length} dead letter(s):`);
    for (const letter of items) console.log(describe(letter));
  } else {
    const result = await call('POST', 'deadletters/replay');
    console.log(`replayed ${result.replayed}; ${result.failed} still dead`);
    for (const letter of result.items) console.log(describe(letter));
    if (result.failed > 0) process.exitCode = 1;
  }
} catch (error) {
  console.error(error.message);
  process.exit(1);
}
