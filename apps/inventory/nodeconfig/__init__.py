"""The device plugin's per-node config (``hami-device-node-config``) in the portal.

The format and its rules are pure (``apps.inventory.hami.nodeconfig`` and
``nodeconfig_rules``); so are how the plugin's DaemonSet reaches the file
(``wiring``) and a draft's what-if (``whatif``). ``selectors`` and
``whatif_data`` read what they need from the database, ``health`` says whether
the plugin reads the file at all. The editor, sync's mirror of the ConfigMap,
import and publish are planned (docs/node-config.md).
"""
