"""The device-config domain: the portal's templates on their way to the cluster.

- ``specs``: inventory rows <-> the pure HAMi format (``apps.inventory.hami``);
- ``whatif``: what publishing the edited chip types would do, before anyone does;
- ``publishing``: import, adopt, publish, roll back, restart the readers;
- ``liveconfig``: the live ConfigMap and its drift from the portal's baseline;
- ``versions``: which Volcano, HAMi and plugin versions read it (their shapes);
- ``restarts`` and ``in_effect``: which version each scheduler loaded;
- ``selectors``: the device-config state of a cluster, in one read;
- ``api``: its REST endpoints (``/api/clusters/<id>/publish/`` and the rest).
"""
