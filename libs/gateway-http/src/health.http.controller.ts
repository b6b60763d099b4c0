import { Controller, Get, Inject, Res, UseFilters } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { subjects } from '@feedmill/contracts';
import { SERVICE_CLIENT, type ServiceClient } from '@feedmill/transport';
import { HttpErrorFilter } from './http-errors.js';

const SERVICES = [subjects.content.status, subjects.graph.status, subjects.timeline.status, subjects.fanout.status];

@Controller()
@UseFilters(HttpErrorFilter)
export class HealthHttpController {
  constructor(@Inject(SERVICE_CLIENT) private readonly client: ServiceClient) {}

  /** The process is alive. */
  @Get('healthz')
  health() {
    return { status: 'ok' };
  }

  /** Every service answers and has caught up with the log: 200, else 503 with the details. */
  @Get('readyz')
  async ready(@Res({ passthrough: true }) reply: FastifyReply) {
    const services = await Promise.all(
      SERVICES.map((subject) =>
        this.client
          .request(subject, {})
          .catch((error: unknown) => ({ service: subject.split('.')[1]!, ready: false, position: -1, error: String(error) })),
      ),
    );
    const ready = services.every((s) => s.ready);
    if (!ready) void reply.status(503);
    return { ready, services };
  }
}
