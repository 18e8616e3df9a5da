"""Shortest-path trees and the SSSP comparison: tree mode, distance colours, the compare chart."""
