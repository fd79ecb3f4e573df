import { type ObjectivesReportDependencies, serviceObjectivesReport } from '../../usecases/objectives/report';
import type { Operation } from '../middleware/http';

/** `GET /admin/slo`: every service-level objective with its target, measured value, samples and status. */
export const getServiceObjectivesOperation =
  (deps: ObjectivesReportDependencies): Operation =>
  async () => ({ statusCode: 200, body: await serviceObjectivesReport(deps) });
