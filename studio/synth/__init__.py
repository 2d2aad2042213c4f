"""The synthetic table renderer (issue 3): procedural tiles, cards, tables, cameras."""

from tabletop.studio.synth.dataset import generate_dataset, image_seed
from tabletop.studio.synth.scene import RenderOptions, Scene, SceneItem, render_scene

__all__ = ["RenderOptions", "Scene", "SceneItem", "generate_dataset", "image_seed",
           "render_scene"]
