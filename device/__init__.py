"""The optional scoring board: protocol, host driver, firmware and emulator.

- ``device.protocol``: frames and messages, no I/O (see device/PROTOCOL.md);
- ``device.driver.Board``: a board behind a pyserial URL, kept connected;
- ``device.adapter``: ``BoardState`` in, board commands out, button presses
  out as ``BoardAction`` (the seam for the game's event bus);
- ``device.emulator``: the real firmware in simavr, for tests and benches;
- ``device.fake``: a pure-Python stand-in for quick unit tests;
- ``device.errors``: the exception tree.
"""
