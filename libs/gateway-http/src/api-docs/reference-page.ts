import type { OpenApiDocument } from './openapi-document.js';

type Json = Record<string, unknown>;

const METHODS = ['get', 'put', 'post', 'patch', 'delete'] as const;

/**
 * The API reference as one HTML page, rendered from the OpenAPI document on the server: no
 * script, no stylesheet or font to fetch, so it reads the same offline, behind a firewall
 * and in a terminal browser. Operations are grouped by tag, each with its parameters, body
 * and answers; schemas are shown as the document has them, their `$ref`s linked.
 */
export function renderReferencePage(document: OpenApiDocument): string {
  const operations = operationsOf(document);
  const tags = (document.tags ?? []).map((tag) => ({ ...tag, operations: operations.filter((op) => op.tags.includes(tag.name)) }));
  const schemas = Object.entries(document.components?.schemas ?? {});
  const responses = Object.entries((document.components?.responses ?? {}) as unknown as Record<string, Json>);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(document.info.title)} API reference</title>
<style>${STYLE}</style>
</head>
<body>
<nav>
<h1>${escape(document.info.title)} <small>${escape(document.info.version)}</small></h1>
<p><a href="/openapi.json">openapi.json</a></p>
${tags
  .map(
    (tag) => `<h2>${escape(tag.name)}</h2><ul>${tag.operations
      .map((op) => `<li><a href="#${op.id}"><span class="m ${op.method}">${op.method.toUpperCase()}</span> ${escape(op.summary)}</a></li>`)
      .join('')}</ul>`,
  )
  .join('\n')}
<h2><a href="#schemas">schemas</a></h2>
</nav>
<main>
<section><h1>${escape(document.info.title)} API reference</h1>${prose(document.info.description)}
${security(document)}</section>
${tags
  .map(
    (tag) => `<section id="tag-${escape(tag.name)}"><h1>${escape(tag.name)}</h1>${prose(tag.description)}
${tag.operations.map((op) => operation(op)).join('\n')}</section>`,
  )
  .join('\n')}
<section id="schemas"><h1>schemas</h1>
${schemas.map(([name, schema]) => `<h3 id="schema-${escape(name)}">${escape(name)}</h3>${schemaBlock(schema)}`).join('\n')}
${responses.map(([name, response]) => `<h3 id="response-${escape(name)}">${escape(name)}</h3>${prose(response['description'])}${content(response['content'])}`).join('\n')}
</section>
</main>
</body>
</html>
`;
}

interface Operation {
  id: string;
  method: string;
  path: string;
  tags: string[];
  summary: string;
  body: Json;
}

function operationsOf(document: OpenApiDocument): Operation[] {
  return Object.entries(document.paths ?? {}).flatMap(([path, item]) =>
    METHODS.flatMap((method) => {
      const body = (item as Json)[method] as Json | undefined;
      if (!body) return [];
      return [{ id: String(body['operationId'] ?? `${method}-${path}`), method, path, tags: (body['tags'] as string[]) ?? [], summary: String(body['summary'] ?? path), body }];
    }),
  );
}

function operation(op: Operation): string {
  const parameters = (op.body['parameters'] as Json[] | undefined) ?? [];
  const requestBody = op.body['requestBody'] as Json | undefined;
  const open = Array.isArray(op.body['security']) && (op.body['security'] as unknown[]).length === 0;
  return `<article id="${escape(op.id)}">
<h2><span class="m ${op.method}">${op.method.toUpperCase()}</span> <code>${escape(op.path)}</code></h2>
<p><strong>${escape(op.summary)}</strong>${open ? ' <span class="open">no token</span>' : ''} <small>${escape(op.id)}</small></p>
${prose(op.body['description'])}
${parameters.length === 0 ? '' : `<h4>parameters</h4><table><tr><th>name</th><th>in</th><th>schema</th><th></th></tr>${parameters.map(parameter).join('')}</table>`}
${requestBody ? `<h4>body${requestBody['required'] ? '' : ' (optional)'}</h4>${content(requestBody['content'])}` : ''}
<h4>answers</h4><dl>${Object.entries((op.body['responses'] as Record<string, Json>) ?? {}).map(([status, response]) => answer(status, response)).join('')}</dl>
</article>`;
}

function parameter(param: Json): string {
  const schema = (param['schema'] ?? {}) as Json;
  return `<tr><td><code>${escape(String(param['name']))}</code>${param['required'] ? ' <b>required</b>' : ''}</td><td>${escape(String(param['in']))}</td><td>${inlineSchema(schema)}</td><td>${prose(param['description'] ?? schema['description'])}</td></tr>`;
}

function answer(status: string, response: Json): string {
  const ref = response['$ref'];
  if (typeof ref === 'string') {
    const name = ref.split('/').pop()!;
    return `<dt>${escape(status)}</dt><dd><a href="#response-${escape(name)}">${escape(name)}</a></dd>`;
  }
  return `<dt>${escape(status)}</dt><dd>${prose(response['description'])}${content(response['content'])}</dd>`;
}

function content(value: unknown): string {
  if (!value || typeof value !== 'object') return '';
  return Object.entries(value as Record<string, Json>)
    .map(([type, media]) => (media['schema'] ? `<p class="type">${escape(type)}</p>${schemaBlock(media['schema'])}` : `<p class="type">${escape(type)}</p>`))
    .join('');
}

/** A short form for a parameter: its type and bounds. */
function inlineSchema(schema: Json): string {
  const bounds = ['minimum', 'maximum', 'default', 'pattern', 'enum']
    .filter((key) => schema[key] !== undefined)
    .map((key) => `${key} ${escape(JSON.stringify(schema[key]))}`);
  return `<code>${escape(String(schema['type'] ?? 'any'))}</code>${bounds.length ? ` <small>${bounds.join(', ')}</small>` : ''}`;
}

/** A schema as the document holds it, with each `$ref` a link to the schema it names. */
function schemaBlock(schema: unknown): string {
  const text = escape(JSON.stringify(schema, null, 2));
  return `<pre>${text.replace(/&quot;#\/components\/schemas\/([A-Za-z0-9_]+)&quot;/g, '<a href="#schema-$1">&quot;#/components/schemas/$1&quot;</a>')}</pre>`;
}

function security(document: OpenApiDocument): string {
  const schemes = Object.entries(document.components?.securitySchemes ?? {});
  return schemes.map(([name, scheme]) => `<h3>${escape(name)} token</h3>${prose((scheme as unknown as Json)['description'])}`).join('');
}

/** Text with `code` spans, as the document's descriptions write them. */
function prose(value: unknown): string {
  if (typeof value !== 'string' || value === '') return '';
  return `<p>${escape(value).replace(/`([^`]+)`/g, '<code>$1</code>')}</p>`;
}

const ENTITIES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escape(value: string): string {
  return value.replace(/[&<>"']/g, (char) => ENTITIES[char]!);
}

const STYLE = `
body{margin:0;display:flex;font:15px/1.5 system-ui,sans-serif;color:#1d1d1f}
nav{width:300px;flex:none;height:100vh;overflow:auto;position:sticky;top:0;background:#f5f5f7;padding:0 16px;box-sizing:border-box;font-size:13px}
nav ul{list-style:none;padding:0;margin:0}nav li{margin:2px 0}nav a{color:inherit;text-decoration:none}
main{flex:1;min-width:0;padding:0 32px 64px;max-width:980px}
article{border-top:1px solid #ddd;padding:8px 0}
.m{display:inline-block;min-width:52px;font:600 11px/18px monospace;text-align:center;border-radius:3px;color:#fff;background:#666}
.get{background:#2b7de9}.post{background:#1f9d55}.put{background:#c77c02}.patch{background:#8e44ad}.delete{background:#d33}
.open{font-size:12px;background:#e8f5e9;padding:1px 6px;border-radius:3px}
pre{background:#f5f5f7;padding:8px 12px;overflow:auto;font-size:12px;max-height:420px}
table{border-collapse:collapse;font-size:13px}td,th{border-bottom:1px solid #eee;padding:4px 8px;text-align:left;vertical-align:top}
dt{font-weight:600}dd{margin:0 0 8px 24px}.type{margin:0;font-size:12px;color:#666}code{font-size:13px}small{color:#666}
`;
