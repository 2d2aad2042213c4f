"""Where the models are made, away from the table: rendered training data
(:mod:`~tabletop.studio.synth`), training the finders and readers
(:mod:`~tabletop.studio.training`, :mod:`~tabletop.studio.reader_training`),
games composed from real photos (:mod:`~tabletop.studio.replay`,
:mod:`~tabletop.studio.card_replay`), adapting to the players' own set
(:mod:`~tabletop.studio.adapt`) and measuring (:mod:`~tabletop.studio.evaluate`).

What runs at the table is :mod:`tabletop.vision`; nothing there imports this package.
"""
