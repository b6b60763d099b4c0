import { Module, type DynamicModule, type Type } from '@nestjs/common';
import { CoreModule, type CoreOptions } from './core.module.js';

@Module({})
class FeedmillRootModule {}

/** One process's module: the shared infrastructure plus the service modules it runs. */
export function rootModule(features: Array<Type | DynamicModule>, core: CoreOptions): DynamicModule {
  return { module: FeedmillRootModule, imports: [CoreModule.forRoot(core), ...features] };
}
