import { readFile } from 'node:fs/promises';
import { markdownToHtml, versusRedisSection } from './report.js';
import type { BenchResults } from './report.js';

describe('markdownToHtml', () => {
  it('renders headings, paragraphs, lists and tables, escaping what would be markup', () => {
    const html = markdownToHtml(`# title
## Figures
| figure | feedmill \\| Redis |
| --- | --- |
| reads | 4,723 /s |

A \`ZADD feed:<reader>\` line,
and **its** second line.
- first
- second`);
    expect(html).toBe(
      [
        '<h1>title</h1>',
        '<h2>Figures</h2>',
        '<table><tr><th>figure</th><th>feedmill | Redis</th></tr><tr><td>reads</td><td>4,723 /s</td></tr></table>',
        '<p>A <code>ZADD feed:&lt;reader&gt;</code> line, and <strong>its</strong> second line.</p>',
        '<ul><li>first</li><li>second</li></ul>',
      ].join('\n'),
    );
  });
});

describe('versusRedisSection', () => {
  const base = {
    mode: 'standalone',
    workload: {} as BenchResults['workload'],
    machine: {} as BenchResults['machine'],
    fanout: { deliveries: 1, seconds: 1, deliveriesPerSecond: 1 },
    cpu: { meanCores: 1, maxCores: 1, samples: 1 },
    mixedLoadAverage: 1,
  };

  it('says why there is no comparison, and how to get one', () => {
    const section = versusRedisSection({ ...base, redis: { available: false, url: 'redis://127.0.0.1:6379', db: 15, reason: 'no Redis answered at redis://127.0.0.1:6379: connect ECONNREFUSED' }, versusRedis: null });
    expect(section).toContain('## feedmill vs Redis home feeds');
    expect(section).toContain('Not measured: no Redis answered at redis://127.0.0.1:6379: connect ECONNREFUSED.');
    expect(section).toContain('REDIS_URL');
    expect(section).not.toContain('| figure |');
  });

  it('shows the table and, loudly, timelines that differ', async () => {
    // A run's results, as the benchmark wrote them, with a mismatch put in.
    const results = JSON.parse(await readFile(new URL('./fixtures/results-small.json', import.meta.url), 'utf8')) as BenchResults;
    expect(results.redis.available).toBe(true);
    const section = versusRedisSection(results);
    expect(section).toContain('| figure | feedmill | Redis | ratio |');
    expect(section.match(/^\| (?!figure|---)/gm)).toHaveLength(results.versusRedis!.length);
    expect(section).toContain('all 200 match');
    if (!results.redis.available) return;
    const differing = { ...results, redis: { ...results.redis, check: { ...results.redis.check, matches: 199, mismatches: 1, examples: ['r7 (first difference at 3): feedmill [..] vs Redis [..]'] } } };
    expect(versusRedisSection(differing)).toContain('**1 DIFFER**, 199 match; for instance:\n- r7 (first difference at 3)');
  });
});
