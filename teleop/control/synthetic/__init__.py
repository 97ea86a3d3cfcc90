"""The synthetic operator: data-driven task scripts turned into human-side motion.

A script (``scripts/<task_id>.yaml``) lists, per hand, steps such as ``grasp``, ``place``,
``press``, ``pull`` relative to the objects. Each step is planned when it begins, from where the
objects are then (:mod:`teleop.control.synthetic.closed_loop`: grasps are checked and retried, slips
re-grasped); the planner turns it into robot palm poses and grip values on a timeline, and
:mod:`teleop.control.synthetic.human` maps those back through the exact inverse of the
retargeter's scaling into what a person's wrists and hand keypoints would be, with tremor and
tracking dropouts. The ``synthetic`` device plays that stream, so every
tick still goes through the real device -> engage -> retarget -> sim -> scorer loop.
"""
