"""The live table: frames to a stable table, table snapshots to game events.

Data flows one way: frame -> detections (vision) -> table snapshot (live.table)
-> game (live.game, with the engine) -> events on the bus (live.bus) -> store,
panel and board.
"""
