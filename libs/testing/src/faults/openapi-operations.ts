/** The parts of a JSON Schema (as the OpenAPI document writes them) the malformed-request generator reads. */
export interface JsonSchema {
  type?: string;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  minItems?: number;
  maxItems?: number;
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maximum?: number;
  pattern?: string;
  enum?: unknown[];
  const?: unknown;
  format?: string;
  example?: unknown;
  $ref?: string;
}

export interface OperationParameter {
  name: string;
  in: 'path' | 'query' | 'header';
  required: boolean;
  schema: JsonSchema;
}

/** One route of the API as its OpenAPI document describes it. */
export interface ApiOperation {
  method: string;
  /** The path template: `/v1/feeds/{group}/{id}`. */
  path: string;
  operationId: string;
  parameters: OperationParameter[];
  /** The JSON body's schema, when the route takes one. */
  body?: JsonSchema;
  bodyRequired: boolean;
  /** Needs no token (`security: []`): health, readiness, the document itself. */
  open: boolean;
}

interface OpenApiDocument {
  paths: Record<string, Record<string, { operationId?: string; parameters?: OperationParameter[]; requestBody?: { required?: boolean; content?: Record<string, { schema: JsonSchema }> }; security?: unknown[] }>>;
  components?: { schemas?: Record<string, JsonSchema> };
}

const METHODS = ['get', 'put', 'post', 'delete', 'patch'];

/** Every operation of an OpenAPI 3.1 document (`GET /openapi.json`), its `$ref`s to components resolved. */
export function operationsOf(document: unknown): ApiOperation[] {
  const doc = document as OpenApiDocument;
  const resolve = (schema: JsonSchema, depth = 0): JsonSchema => {
    if (depth > 8) return {};
    if (schema.$ref) return resolve(doc.components?.schemas?.[schema.$ref.replace('#/components/schemas/', '')] ?? {}, depth + 1);
    const resolved: JsonSchema = { ...schema };
    if (schema.properties) resolved.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, resolve(v, depth + 1)]));
    if (schema.items) resolved.items = resolve(schema.items, depth + 1);
    return resolved;
  };
  const operations: ApiOperation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      if (!METHODS.includes(method)) continue;
      const json = operation.requestBody?.content?.['application/json']?.schema;
      operations.push({
        method: method.toUpperCase(),
        path,
        operationId: operation.operationId ?? `${method} ${path}`,
        parameters: (operation.parameters ?? []).map((p) => ({ ...p, required: p.required ?? false, schema: resolve(p.schema) })),
        ...(json && { body: resolve(json) }),
        bodyRequired: operation.requestBody?.required ?? false,
        open: Array.isArray(operation.security) && operation.security.length === 0,
      });
    }
  }
  return operations;
}
