/**
 * The one form of an inbound auth startup failure: `auth_config_invalid` with a hint, thrown as a
 * SvcFailure while the settings or the key file are read, so the server never starts half-configured.
 */
import { svcError, SvcFailure } from '../../common/errors.js';

/** Throw the startup failure `auth_config_invalid` with this message and hint. */
export const startupFail = (message: string, hint: string): never => {
  throw new SvcFailure([svcError('auth_config_invalid', message, { hint })]);
};
