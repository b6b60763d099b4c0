import { Controller, Get, Header, UseFilters } from '@nestjs/common';
import { HttpErrorFilter } from '../http-errors.js';
import { openApiDocument, type OpenApiDocument } from './openapi-document.js';
import { renderReferencePage } from './reference-page.js';

/**
 * The API's own description, for people (`/docs`) and for tools (`/openapi.json`). Both are
 * built once, at start, from the schemas the routes validate with; neither needs a token.
 */
@Controller()
@UseFilters(HttpErrorFilter)
export class ApiDocsHttpController {
  private readonly document: OpenApiDocument = openApiDocument();
  private readonly page: string = renderReferencePage(this.document);

  @Get('openapi.json')
  openApi(): OpenApiDocument {
    return this.document;
  }

  @Get('docs')
  @Header('content-type', 'text/html; charset=utf-8')
  docs(): string {
    return this.page;
  }
}
