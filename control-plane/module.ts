// An area of the API adds itself to Kiln as one module: its entities, the services it builds and its routes
// (each declaring its permission). modules.ts lists the modules in order; the app (app.ts) and the database
// (database/orm.ts) are built from that list, so a new area is a folder and one line there.
import type { EntitySchema } from '@mikro-orm/core';
import type { AppDeps } from './app.ts';
import type { CursorCodec } from './core/pagination.ts';
import type { KeyPurpose } from '../lib/keys.ts';
import type { Route } from './http/routes.ts';

/**
 * The services modules build, by name. Each area adds its own from its module file:
 * `declare module '../module.ts' { interface Services { deployments: DeploymentService } }`.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by declaration merging
export interface Services {}

export interface ModuleContext extends AppDeps {
  /** A key derived from the signing key for one purpose (HKDF): each purpose gets its own. */
  key(purpose: KeyPurpose): Buffer;
  /** Signs the pagination cursors of every list. */
  cursors: CursorCodec;
  /** Services of the modules listed before this one; routes see them all. Reading one not built yet throws. */
  services: Services;
  /** Every route of the app, once all are declared (the OpenAPI document, analytics). */
  routes(): readonly Route[];
}

export interface ApiModule {
  readonly name: string;
  readonly entities?: readonly EntitySchema[];
  services?(context: ModuleContext): Partial<Services>;
  routes?(context: ModuleContext): Route[];
  /** Runs when the app closes (after the server stopped answering, before the database closes). */
  close?(services: Services): Promise<void> | void;
}

export const defineModule = (module: ApiModule): ApiModule => module;
