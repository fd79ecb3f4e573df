import type { Operation } from '../middleware/http';
import { operatorOf } from '../middleware/principal';

/** `GET /admin/me`: the signed-in operator as four-eyes counts it (C27), and its roles. */
export const whoAmIOperation: Operation = async ({ principal }) => {
  const { identity, roles, machine } = operatorOf(principal);
  return { statusCode: 200, body: { identity, roles, machine } };
};
