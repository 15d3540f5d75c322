import { defineWorkKind } from '../async-work/work-kinds';
import { locationWork } from '../location/location.module';
import { defineModule } from '../resource-module';
import { CitationResolver } from './citation.resolver';
import { CITATIONS_DISABLE } from './citation.service';

/** The citations of locations: disabled within the request, recorded as work done on the location. */
export const citationModule = defineModule({
  name: 'citation',
  resolvers: [CitationResolver],
  workKinds: [defineWorkKind({ name: CITATIONS_DISABLE, type: locationWork })],
});
