import { installOutboundAllowList, parseCidrList } from '@tollgate/outbound';
import { TEST_OUTBOUND_ALLOW_CIDRS } from '../libs/testing/src/test-env';

// Specs that connect to loopback fixtures without booting an app (so without ConfigModule) get
// the same allowance test-env gives a platform; a platform boot installs its own list over it.
installOutboundAllowList(parseCidrList(TEST_OUTBOUND_ALLOW_CIDRS));
