// wrk's Lua scripts for the throughput scripts: each connection takes the next request of a
// list that wrk cycles through, from a random start.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Writes `paths` and a script that GETs them into `dir`; returns the script's path. */
export async function wrkGets(dir, paths) {
  await writeFile(join(dir, 'paths.txt'), paths.join('\n') + '\n');
  const script = join(dir, 'reads.lua');
  await writeFile(
    script,
    `local requests, next = {}, 0
function init(args)
  for path in io.lines("${join(dir, 'paths.txt')}") do requests[#requests + 1] = wrk.format("GET", path) end
  next = math.random(#requests)
end
function request() next = next % #requests + 1; return requests[next] end
`,
  );
  return script;
}

/** Writes `posts` (`{ path, body }`, the body JSON) and a script that POSTs them into `dir`; returns the script's path. */
export async function wrkPosts(dir, posts) {
  await writeFile(join(dir, 'requests.tsv'), posts.map(({ path, body }) => `${path}\t${body}`).join('\n') + '\n');
  const script = join(dir, 'posts.lua');
  await writeFile(
    script,
    `local requests, next = {}, 0
function init(args)
  local file = io.open("${join(dir, 'requests.tsv')}")
  for line in file:lines() do
    local path, body = line:match("^([^\\t]*)\\t(.*)$")
    requests[#requests + 1] = wrk.format("POST", path, { ["content-type"] = "application/json" }, body)
  end
  next = math.random(#requests)
end
function request() next = next % #requests + 1; return requests[next] end
`,
  );
  return script;
}
