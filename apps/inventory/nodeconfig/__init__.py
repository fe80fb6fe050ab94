"""The device plugin's per-node config (``hami-device-node-config``) in the portal.

The format and its rules are pure (``apps.inventory.hami.nodeconfig`` and
``nodeconfig_rules``); this package reads what they need from the database.
Only checking and a starting file exist yet: the editor, sync's mirror of the
ConfigMap, import and publish are planned (docs/node-config.md).
"""
