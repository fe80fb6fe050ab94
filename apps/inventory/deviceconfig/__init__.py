"""The device-config domain: the portal's templates on their way to the cluster.

From the bottom up (each module imports only those above it in this list):

- ``specs``: inventory rows <-> the pure HAMi format (``apps.inventory.hami``);
- ``versions``: which Volcano, HAMi and plugin versions read it (their shapes);
- ``in_effect``: which stored version the running scheduler placed by;
- ``selectors``: its reads: stored versions, the render, drift, the template
  fit by the version in effect, and its whole state in one read;
- ``services``: its writes: versions (parse, store, import, observe) and the
  pending writes recorded before each PUT;
- ``liveconfig``: the live ConfigMap and its drift from the portal's baseline;
- ``restarts``: the restart state of the components that read it, live;
- ``refresh``: reading when the scheduler started (so ``in_effect`` knows);
- ``whatif``: what publishing the edited chip types would do, before anyone does;
- ``health``: the configuration checks, from what sync mirrored;
- ``publishing``: import, adopt, publish, roll back, restart the readers;
- ``api``: its REST endpoints (``/api/clusters/<id>/publish/`` and the rest).
"""
