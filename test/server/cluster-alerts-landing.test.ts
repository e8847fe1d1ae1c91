/**
 * Couchbase's own alerts through a real daemon polling the simulator (knob `alerts`): the count per kind on
 * /metrics, the message on the landing page (redacted, escaped), and never the message text on /metrics.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Daemon } from '../../src/daemon.js';
import { createSimulator } from '../../src/simulator/index.js';
import type { Simulator } from '../../src/simulator/index.js';
import { startQuietDaemon } from '../helpers/daemon.js';

const DISK = 'Approaching full disk warning. Usage of disk "/data" on node "cb1.cbsim.local" is around 93%.';
const SYNC = "The time on node 'ns_1@cb2.cbsim.local' is not synchronized. Please ensure that NTP is set up correctly on all nodes and that clocks are synchronized.";

describe("Couchbase's own alerts through the daemon", () => {
  let sim: Simulator | undefined;
  let daemon: Daemon | undefined;
  beforeAll(async () => {
    sim = createSimulator();
    const password = sim.ctx.options.users.admin.password;
    // One message quotes the cbwatch password (as an echoing proxy might): it must not reach the page.
    sim.ctx.options.knobs.alerts = [DISK, SYNC, `Unheard-of alert <b>quoting ${password}</b>`];
    daemon = await startQuietDaemon(sim, 'c1');
  }, 30_000);
  afterAll(async () => {
    await daemon?.close();
    await sim?.close();
  });

  it('counts by kind on /metrics, without the messages', async () => {
    const metrics = await (await fetch(`${daemon?.url}/metrics`)).text();
    expect(metrics).toContain('couchbase_cluster_alerts{couchbase_cluster="c1",kind="disk_nearly_full"} 1');
    expect(metrics).toContain('couchbase_cluster_alerts{couchbase_cluster="c1",kind="time_out_of_sync"} 1');
    expect(metrics).toContain('couchbase_cluster_alerts{couchbase_cluster="c1",kind="other"} 1');
    expect(metrics).toContain('couchbase_cluster_alerts{couchbase_cluster="c1",kind="cas_drift"} 0');
    expect(metrics).not.toContain('Approaching full disk');
  });

  it('shows the messages on the landing page, escaped and without the password', async () => {
    const page = await (await fetch(`${daemon?.url}/`)).text();
    const section = page.slice(page.indexOf('Needs a look'), page.indexOf('<h2>Collectors'));
    expect(section).toContain('Couchbase alert (disk_nearly_full): Approaching full disk warning. Usage of disk &quot;/data&quot; on node &quot;cb1.cbsim.local&quot; is around 93%.');
    expect(section).toContain('Couchbase alert (time_out_of_sync): The time on node &#39;ns_1@cb2.cbsim.local&#39; is not synchronized.');
    expect(section).toContain('Couchbase alert (other): Unheard-of alert &lt;b&gt;quoting [redacted]&lt;/b&gt;');
    expect(page).not.toContain(sim?.ctx.options.users.admin.password as string);
  });
});
