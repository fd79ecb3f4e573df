import { codesToAcknowledge } from '../../domain/change-control/guardrails';
import type { ChangeRequestRecord } from '../../ports/change-requests';
import { approveChangeRequest, type ChangeRequestDependencies, createChangeRequest } from './change-requests';

/**
 * Built-in operators of the local stack: the demo catalog is recorded as a change request of kind `catalog`
 * authored by one and approved by the two others, so the history is complete from version 1. They have no
 * tokens: nobody can act as them over HTTP.
 */
export const LOCAL_BOOTSTRAP_OPERATORS = {
  author: 'local-bootstrap',
  approvers: ['local-operator-1', 'local-operator-2'],
} as const;

/** Publishes a whole catalog through a change request approved by the built-in operators. */
export const publishSeedCatalog = async (
  deps: ChangeRequestDependencies,
  document: unknown,
  note: string,
): Promise<ChangeRequestRecord> => {
  const { effective_from: effectiveFrom, ...payload } = document as Record<string, unknown>;
  const created = await createChangeRequest(
    deps,
    {
      kind: 'catalog',
      payload,
      note,
      ...(typeof effectiveFrom === 'string' ? { effective_from: effectiveFrom } : {}),
    },
    LOCAL_BOOTSTRAP_OPERATORS.author,
  );
  const acknowledge = codesToAcknowledge(created.guardrails);
  let record: ChangeRequestRecord = created;
  for (const by of LOCAL_BOOTSTRAP_OPERATORS.approvers) {
    record = await approveChangeRequest(deps, created.cr_id, {
      by,
      acknowledge,
      comment: 'built-in local operator',
    });
  }
  return record;
};
